# monosem: the two commands are `make book` and `make test` (set-up included).
#   make book [PROFILE=smoke|cpu|paper]   build the whole book (default PROFILE=cpu)
#   make test                             unit tests + nbval regression tests of notebooks/
#   make pdf [PROFILE=...]                the book as one PDF, _build/latex/monosem.pdf (needs TeX: pdf-deps)
# Other targets: venv, sync, execute, html, pdf-deps, reference, clean.

PROFILE ?= cpu
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
# The CPU build of torch (this pin takes a local wheel on the project's machines; elsewhere pip
# picks the default build for the platform). Override e.g. TORCH_SPEC="torch" on a GPU machine
# that already has torch.
TORCH_SPEC ?= torch==2.13.0
# Optional: a package index to take torch from (e.g. PyTorch's CPU-only wheel index), for a
# machine without a local CPU wheel where the default index would pull the multi-GB CUDA build.
TORCH_INDEX ?=
NOTEBOOKS := $(sort $(wildcard notebooks/[0-9][0-9]_*.md))
EXECUTED := book/executed
# every page writes the claims it judged here; the status page is generated from them
export MONOSEM_CLAIMS := $(CURDIR)/$(EXECUTED)/claims
# and how long each page took to execute (the reproduce page shows this build's own times)
export MONOSEM_TIMINGS := $(CURDIR)/$(EXECUTED)/timings.tsv
STAMP := $(VENV)/.monosem-installed
# Sweep results (one small JSON per cell, trained networks beside them): a rebuild recomputes
# only what is missing. Not committed.
export MONOSEM_CACHE ?= $(CURDIR)/results/cache

.PHONY: book test venv sync execute html pdf pdf-deps reference clean

book: venv sync execute html

test: venv sync
	@echo "== lint (ruff: pyflakes, bugbear, pylint errors)"
	$(BIN)/ruff check monosem tests benchmarks conftest.py
	@echo "== unit tests"
	$(BIN)/python -m pytest tests
	@echo "== notebook regression tests (nbval at the smoke profile: settings in conftest.py)"
	$(BIN)/python -m pytest --nbval notebooks

venv: $(STAMP)

$(STAMP): pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet $(if $(TORCH_INDEX),--index-url "$(TORCH_INDEX)") "$(TORCH_SPEC)"
	$(BIN)/python -m pip install --quiet -e ".[book,test,peers]"
	touch $(STAMP)

# Keep every notebooks/NN_name.md (the source you edit) and its .ipynb twin in step.
sync: venv
	$(BIN)/jupytext --quiet --sync $(NOTEBOOKS)

# Execute every notebook with papermill at $(PROFILE) into book/executed/ (never in place:
# the injected-parameters cell would leak into the paired source), $(LANES) pages at a time,
# each page one process with $(LANE_THREADS) torch thread(s): the pages' tensors are small, so a
# second thread does little for one page while a second page uses the second core (the reproduce
# page shows each page's time and the whole build's). Override e.g. LANES=1 LANE_THREADS=2.
CORES := $(shell getconf _NPROCESSORS_ONLN 2>/dev/null || echo 1)
LANES ?= $(shell c=$(CORES); if [ $$c -ge 4 ]; then echo 4; elif [ $$c -ge 2 ]; then echo 2; else echo 1; fi)
LANE_THREADS ?= $(shell c=$(CORES); t=$$((c / $(LANES))); [ $$t -ge 1 ] && echo $$t || echo 1)

execute: venv
	@mkdir -p $(EXECUTED)
	@# slowest first by the previous build's timings (scripts/page_order.sh)
	@bash scripts/page_order.sh $(PROFILE) $(MONOSEM_TIMINGS) $(basename $(notdir $(NOTEBOOKS))) > $(EXECUTED)/order.txt
	@rm -rf $(MONOSEM_CLAIMS) $(MONOSEM_TIMINGS)
	@echo "executing $(words $(NOTEBOOKS)) pages at profile $(PROFILE): $(LANES) at a time, $(LANE_THREADS) thread(s) each"
	@cat $(EXECUTED)/order.txt | \
	  PROFILE=$(PROFILE) BIN=$(BIN) EXECUTED=$(EXECUTED) OMP_NUM_THREADS=$(LANE_THREADS) MKL_NUM_THREADS=$(LANE_THREADS) \
	  xargs -P $(LANES) -n 1 bash scripts/execute_page.sh || { echo "a page FAILED: see above"; exit 1; }
	@# the status and reproduce pages, generated from what the pages above published
	@for page in status reproduce; do \
	  $(BIN)/jupytext --quiet --to ipynb book/$$page.md -o $(EXECUTED)/$${page}_source.ipynb; \
	  TQDM_DISABLE=1 $(BIN)/papermill --no-progress-bar --log-level ERROR --cwd notebooks \
	    $(EXECUTED)/$${page}_source.ipynb $(EXECUTED)/$$page.ipynb 2> $(EXECUTED)/$$page.log \
	    || { echo "$$page page FAILED"; tail -n 30 $(EXECUTED)/$$page.log; exit 1; }; \
	  rm -f $(EXECUTED)/$${page}_source.ipynb; \
	done

html: venv
	$(BIN)/jupyter-book build . -W --keep-going

# The book as one PDF, from the pages `make execute` ran (executed first if missing), with
# jupyter-book's LaTeX builder and XeLaTeX (_config.yml). The TeX it needs comes from Debian's /
# Ubuntu's packages: `make pdf-deps` installs them (as root).
PDF_PACKAGES := texlive-latex-recommended texlive-latex-extra texlive-fonts-recommended texlive-xetex \
  texlive-plain-generic latexmk xindy fonts-freefont-otf tex-gyre
pdf: venv
	@test -f $(EXECUTED)/status.ipynb || $(MAKE) sync execute PROFILE=$(PROFILE)
	$(BIN)/jupyter-book build . --builder pdflatex
	@echo "the PDF: _build/latex/monosem.pdf"

pdf-deps:
	apt-get update && apt-get install -y --no-install-recommends $(PDF_PACKAGES)

# Re-execute the committed notebooks/*.ipynb at the smoke profile (nbval's reference outputs).
reference: venv sync
	@for md in $(NOTEBOOKS); do nb=$${md%.md}.ipynb; echo "reference: $$nb"; \
	  MONOSEM_PROFILE=smoke TQDM_DISABLE=1 $(BIN)/jupyter nbconvert --log-level ERROR --to notebook \
	    --execute --inplace $$nb || exit 1; done
	$(BIN)/jupytext --quiet --sync $(NOTEBOOKS)

clean:
	rm -rf _build $(EXECUTED)
