# Every target bootstraps .venv on a fresh machine; installs are pinned by constraints.txt.
PYTHON ?= python3.11
VENV   ?= .venv
PY     := $(VENV)/bin/python
STAMP  := $(VENV)/.installed
DAGSTER_POSTGRES := dagster-postgres==0.29.27
# Dagster's Celery and Kubernetes executors: same lockstep release, same dagster==1.13.27 pin.
DAGSTER_EXECUTORS := dagster-celery==0.29.27 dagster-k8s==0.29.27
DEMO_WORKSPACE ?= demo-workspace
# Bytecode for the editable install, as pip writes it for every other package: a shell with
# PYTHONDONTWRITEBYTECODE set would otherwise compile ~110 modules at every command's start
# (0.2-0.4 s of a 4 s demo readout). Cheap when up to date; a stale file is simply recompiled.
COMPILE := $(PY) -m compileall -q langchef_core langchef_pipeline

# setuptools warns on every editable install of a flat layout ("Editable installation …
# folders with the same name as your package"); that is this project's layout on purpose.
EDITABLE := PYTHONWARNINGS="ignore:Editable installation" $(PY) -m pip install --quiet -c constraints.txt -e
# What `make demo` needs: langchef and its own dependencies, not the test or tool extras.
DEMO_STAMP := $(VENV)/.demo-installed

.PHONY: test tools demo dev bench lock clean

$(DEMO_STAMP): pyproject.toml constraints.txt
	test -x $(PY) || $(PYTHON) -m venv $(VENV) || python3 -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade "pip>=24,<27"
	$(EDITABLE) .
	$(COMPILE)
	touch $(DEMO_STAMP)

$(STAMP): pyproject.toml constraints.txt
	test -x $(PY) || $(PYTHON) -m venv $(VENV) || python3 -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade "pip>=24,<27"
	$(EDITABLE) '.[test,inspect,bench]'
	# The PostgreSQL Dagster storage (deploy/dagster.yaml). 0.29.27 is the newest release and
	# declares dagster==1.13.27; ours is 1.13.28 (a patch apart: its SQL storage works as is),
	# so it is installed without its dependency pin. `pip check` reports that skew.
	$(PY) -m pip install --quiet --no-deps $(DAGSTER_POSTGRES)
	# dagster-celery and dagster-k8s (the Celery judging test, the Kubernetes run-config check)
	# declare the same dagster==1.13.27, so they go in the same way; their own dependencies
	# (celery, redis, kubernetes, google-auth) come pinned through the test extra.
	$(PY) -m pip install --quiet --no-deps $(DAGSTER_EXECUTORS)
	$(COMPILE)
	touch $(STAMP) $(DEMO_STAMP)

# The eval tools whose real logs tests/importers/ imports (lm-eval, promptfoo); Inspect AI is
# the `inspect` extra above. Without them those tests skip, except in CI (CI=true).
TOOLS_DIR ?= .tools
tools:
	tools/install-eval-tools.sh $(TOOLS_DIR)

test: $(STAMP)
	LANGCHEF_TEST_LM_EVAL_PYTHON=$${LANGCHEF_TEST_LM_EVAL_PYTHON:-$(CURDIR)/$(TOOLS_DIR)/lm-eval/bin/python} \
	LANGCHEF_TEST_PROMPTFOO=$${LANGCHEF_TEST_PROMPTFOO:-$(CURDIR)/$(TOOLS_DIR)/promptfoo/node_modules/.bin/promptfoo} \
	$(PY) -m pytest --durations=30

# demo and dev share one DAGSTER_HOME, so the UI shows the demo's readouts as materialised.
DAGSTER_HOME ?= $(CURDIR)/.dagster_home

# langchef writes $(DAGSTER_HOME)/dagster.yaml when there is none (Dagster's telemetry off;
# langchef_pipeline/materialize.py), so neither target shows Dagster's set-up warnings.
demo: $(DEMO_STAMP)
	mkdir -p $(DAGSTER_HOME)
	$(COMPILE)
	DAGSTER_HOME=$(DAGSTER_HOME) $(VENV)/bin/langchef demo --workspace $(DEMO_WORKSPACE)

dev: $(DEMO_STAMP)
	mkdir -p $(DAGSTER_HOME)
	$(PY) -c "import pathlib, sys; from langchef_pipeline.materialize import ensure_instance_yaml; ensure_instance_yaml(pathlib.Path(sys.argv[1]))" $(DAGSTER_HOME)
	LANGCHEF_WORKSPACE=$${LANGCHEF_WORKSPACE:-$(CURDIR)/$(DEMO_WORKSPACE)} DAGSTER_HOME=$(DAGSTER_HOME) \
	$(VENV)/bin/dagster dev -w workspace.yaml -h 127.0.0.1

# The peers' extra (the openai SDK that Inspect AI's OpenAI provider needs).
BENCH_STAMP := $(VENV)/.bench-installed
$(BENCH_STAMP): $(STAMP)
	$(EDITABLE) '.[test,inspect,bench]'
	touch $(BENCH_STAMP)

# Side-by-side speed against peers (scipy's paired bootstrap; pytrec_eval and ranx; Inspect AI),
# and the UI path against the command line (one demo partition launched through `dagster dev`'s
# GraphQL API, beside `langchef readout` of the same experiment).
# The readouts and retrieval run at the sizes issue 31 sets targets for (10^5 and 10^6; about
# a quarter of an hour in all on 2 cores). Larger runs by hand: bench_compare.py --sizes
# 1000000, bench_judging.py (2 x 10^4 calls, its default; Inspect needs about 20 minutes).
bench: $(BENCH_STAMP)
	$(COMPILE)
	$(PY) benchmarks/bench_readout.py --sizes 100000 1000000
	$(PY) benchmarks/bench_ui_readout.py
	$(PY) benchmarks/bench_compare.py --sizes 1000 100000
	$(PY) benchmarks/bench_retrieval.py --queries 100000 --docs 100
	$(PY) benchmarks/bench_retrieval.py --queries 1000000 --docs 100
	$(PY) benchmarks/bench_judging.py --goldens 2000

# Refresh the pinned versions after changing pyproject.toml.
lock: $(STAMP)
	$(PY) -m pip freeze --exclude-editable | grep -v '^langchef' > constraints.txt

clean:
	rm -rf $(VENV) $(TOOLS_DIR) .pytest_cache
