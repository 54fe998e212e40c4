"""The GPU job: ``pack`` (what travels to a lent GPU machine), ``job`` (the one command run
there, in parts that each write their JSON), ``rehearse`` (the same job on this CPU, in a fresh
virtual environment holding only what the GPU machine's image holds plus the pack)."""
