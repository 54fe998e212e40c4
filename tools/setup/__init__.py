"""Set-up: ``python -m tools.setup.dev COMMAND``, what ``make`` runs; written for old Pythons
too."""
