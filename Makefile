# simready — the two commands a newcomer needs are `make run` and `make test`.
PYTHON ?= python3.11
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed-stamp
DVC_VENV  := .venv-dvc
DVC_STAMP := $(DVC_VENV)/.installed-stamp
DVC_PIN   := dvc==3.67.1
# ASAM's OpenDRIVE and OpenSCENARIO checkers pin numpy<2: its own venv, driven as a subprocess (simready.maps.qc).
QC_VENV   := .venv-qc
QC_STAMP  := $(QC_VENV)/.installed-stamp
QC_PIN    := asam-qc-opendrive==1.0.0 asam-qc-openscenarioxml==1.0.0
# The official nuScenes devkit pins numpy<2: its own venv, driven as a subprocess by the export's test (issue 18).
NUSC_VENV  := .venv-nuscenes
NUSC_STAMP := $(NUSC_VENV)/.installed-stamp
NUSC_PIN   := nuscenes-devkit==1.2.0
# make test: three workers on two cores. The integration tests spend much of their time waiting (the Dagster daemon's
# 5 s sensor loop, Celery, Postgres, S3, the browser), and a third worker fills those waits: on a 2-core host, the same
# clone, 397 s of pytest with two workers, 359 s with three, about the same CPU. make test-fast is CPU-bound: two.
PYTEST_WORKERS ?= 3
FAST_WORKERS ?= 2

# A project-local Dagster instance (SQLite storage) and artifacts folder.
export DAGSTER_HOME := $(CURDIR)/.dagster_home
export SIMREADY_ARTIFACTS ?= $(CURDIR)/artifacts
# `make ui` serves the artifacts folder here beside the Dagster UI, so the asset pages' thumbnails load and
# their links (review pages, videos, Data Docs) open in the browser; `make run` writes those links. The server
# (simready.review.serve) answers byte ranges, so videos seek, and listens on the port the last run wrote its
# links for unless ARTIFACTS_PORT is given (then it warns in one line when they differ).
ARTIFACTS_PORT ?= 3001
run ui: export SIMREADY_ARTIFACTS_URL ?= http://127.0.0.1:$(ARTIFACTS_PORT)

.PHONY: install run test test-fast ui bench browser dvc-venv dvc-repro dvc-status qc-venv nuscenes-venv clean

$(STAMP): pyproject.toml
	@test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[dev]'
	@touch $(STAMP)

# The numba kernels a run calls, compiled once into their caches (every core; `simready run` checks again), and the
# argument types only the tests call them with (--tests: 46 signatures, ~17 CPU-s, that a fresh clone's test workers
# otherwise compiled each the ones it met first). numba keeps them beside the kernels' modules, in this clone's
# __pycache__ folders, not in the venv: the stamp is there too, so a clone using a venv installed elsewhere gets them.
KERNEL_STAMP := simready/__pycache__/kernels-warmed.stamp
$(KERNEL_STAMP): $(STAMP) simready/kernel_signatures.py
	$(BIN)/python -m simready.kernel_cache --tests
	@mkdir -p $(@D) && touch $@

install: $(STAMP) $(KERNEL_STAMP)

$(DAGSTER_HOME)/dagster.yaml: deploy/dagster.yaml
	@mkdir -p $(DAGSTER_HOME)
	cp deploy/dagster.yaml $(DAGSTER_HOME)/dagster.yaml

## make run: materialize the whole asset graph on the embedded default and print a summary
run: install $(DAGSTER_HOME)/dagster.yaml
	$(BIN)/simready run --quiet

# The suite's processes keep their bytecode (the tests' rewritten modules, simready's own) even where the shell sets
# PYTHONDONTWRITEBYTECODE: otherwise every xdist worker and every CLI subprocess a test starts compiles them again.
test test-fast: export PYTHONDONTWRITEBYTECODE :=

## make test: install, then run the whole suite (what CI runs)
test: install qc-venv nuscenes-venv browser
	$(BIN)/python -m pytest -q -n $(PYTEST_WORKERS) --dist loadgroup -p no:cacheprovider --durations=15

## make test-fast: unit tests only (skips tests marked slow)
test-fast: install
	$(BIN)/python -m pytest -q -n $(FAST_WORKERS) --dist loadgroup -p no:cacheprovider -m "not slow"

## make ui: the Dagster UI on this code location
ui: install $(DAGSTER_HOME)/dagster.yaml
	@mkdir -p $(SIMREADY_ARTIFACTS)
	$(BIN)/python -m simready.review.serve $(SIMREADY_ARTIFACTS) $(if $(filter command line environment,$(origin ARTIFACTS_PORT)),--port $(ARTIFACTS_PORT)) & \
	server=$$!; trap 'kill $$server' EXIT INT TERM; $(BIN)/dagster dev -w workspace.yaml

## make browser: Debian's chromium for the browser tests (Playwright drives it; its own browser download is not used)
browser:
	@command -v chromium >/dev/null 2>&1 || { \
	  if [ "$$(id -u)" = 0 ]; then apt-get update -qq && apt-get install -y -qq chromium; \
	  else echo "make browser: chromium is missing; install Debian's chromium as root: apt-get install -y chromium" >&2; \
	    exit 1; fi; }

## make bench: print the performance figures the issues ask for
bench: install
	$(BIN)/python -m simready.bench

# DVC lives in its own venv: dvc's antlr pin breaks Dagster's asset-selection parser.
$(DVC_STAMP):
	@test -x $(DVC_VENV)/bin/python || $(PYTHON) -m venv $(DVC_VENV)
	$(DVC_VENV)/bin/python -m pip install --quiet '$(DVC_PIN)'
	@touch $(DVC_STAMP)

dvc-venv: $(DVC_STAMP)

# Rebuilt when the Makefile (QC_PIN) changes: a venv made before a checker was added gets it.
$(QC_STAMP): Makefile
	@test -x $(QC_VENV)/bin/python || $(PYTHON) -m venv $(QC_VENV)
	$(QC_VENV)/bin/python -m pip install --quiet $(QC_PIN)
	@touch $(QC_STAMP)

## make qc-venv: ASAM's OpenDRIVE and OpenSCENARIO checkers in their own venv, for the export tests
qc-venv: $(QC_STAMP)

$(NUSC_STAMP): Makefile
	@test -x $(NUSC_VENV)/bin/python || $(PYTHON) -m venv $(NUSC_VENV)
	$(NUSC_VENV)/bin/python -m pip install --quiet '$(NUSC_PIN)'
	@touch $(NUSC_STAMP)

## make nuscenes-venv: the official nuScenes devkit in its own venv, for the nuScenes export test
nuscenes-venv: $(NUSC_STAMP)

## make dvc-repro: regenerate DVC-tracked outputs (procedural meshes) and update dvc.lock
dvc-repro: install dvc-venv
	PATH=$(CURDIR)/$(BIN):$$PATH $(DVC_VENV)/bin/dvc repro

dvc-status: dvc-venv
	PATH=$(CURDIR)/$(BIN):$$PATH $(DVC_VENV)/bin/dvc status

clean:
	rm -rf artifacts .dagster_home
