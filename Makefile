# Thin wrapper: every target runs tools/dev.py, which creates .venv on first use and installs
# what is missing (Windows: run `python tools/dev.py book` etc. directly).
#   make book               build both editions, every chapter executed (ARGS="--lang zh" ...)
#   make test               run the tests (ARGS="-k parity" ...)
#   make pdf | assign | export | bench | lock | setup | clean
PYTHON ?= python3
DEV = $(PYTHON) tools/dev.py

.PHONY: book test pdf assign export bench lock setup clean
book test pdf assign export bench lock setup clean:
	@$(DEV) $@ $(ARGS)
