# Thin wrapper: every target runs tools/setup/dev.py, which creates .venv on first use and installs
# what is missing (Windows: run `python -m tools.setup.dev book` etc. directly).
#   make book               build both editions, every chapter executed (ARGS="--lang zh" ...)
#   make test               run the tests (ARGS="-k parity" ...)
#   make check              ruff, library tests, source checks (quick; for contributors)
#   make doctor             what a bug report needs (Python, torch, fonts, TeX, data, caches)
#   make chapter NAME=mixture-of-experts TITLE="..." TITLE_ZH="..."   a new chapter, both editions
#   make gpu-pack           write .gpu/: what the GPU job needs that the GPU machine lacks (< 60 MiB)
#   make gpu-rehearse       that job on this CPU, tiny, from the pack, in a fresh venv (a few min)
#   make pdf | assign | export | bench | lock | setup | system | clean
PYTHON ?= python3
DEV = $(PYTHON) -m tools.setup.dev

.PHONY: book test check doctor pdf assign export bench lock setup system clean chapter \
	gpu-pack gpu-rehearse
book test check doctor pdf assign export bench lock setup system clean gpu-pack gpu-rehearse:
	@$(DEV) $@ $(ARGS)

chapter:
	@$(DEV) chapter $(NAME) $(if $(TITLE),--title "$(TITLE)") $(if $(TITLE_ZH),--title-zh "$(TITLE_ZH)") $(ARGS)
