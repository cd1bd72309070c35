# The README's commands. Each creates .venv on first use and installs what it needs.
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
PY := $(BIN)/python
PYTEST_ARGS ?=

.PHONY: demo test core-test docs lint typecheck unit integration connect cluster bench calibrate clean jvm kafka-test kafka-demo java-matrix jvm-legacy

# Apache Kafka's jars (broker, clients, group coordinator) from Maven Central, pinned in jvm/pom.xml; ~/.m2 caches
# them. `make jvm KAFKA_VERSION=4.1.1` builds another version beside it (jvm/target/kafka-VERSION/).
KAFKA_VERSION ?= 4.4.0
export KAFKA_VERSION  # the tests run the build of this version (tests/kafka_jvm.py)
JVM_BUILD := jvm/target/kafka-$(KAFKA_VERSION)
JAVA_SOURCES := $(shell find jvm/src -name '*.java' 2>/dev/null)

$(JVM_BUILD)/classpath.txt: jvm/pom.xml $(JAVA_SOURCES)
	@command -v java >/dev/null 2>&1 || { echo "java not found: install a JDK 17 or newer (Debian: apt-get install openjdk-17-jdk-headless)" >&2; exit 1; }
	@command -v mvn >/dev/null 2>&1 || { echo "mvn not found: install Maven 3.8 or newer (Debian: apt-get install maven)" >&2; exit 1; }
	mvn -q -B -f jvm/pom.xml -Dkafka.version=$(KAFKA_VERSION) package \
	  || { echo "Maven could not build jvm/ for Kafka $(KAFKA_VERSION): is Maven Central reachable?" >&2; exit 1; }
	@touch $@

jvm: $(JVM_BUILD)/classpath.txt

# The Java oracle's uniform check before KAFKA-18688 (tests/java/test_uniform.py) runs against this version.
ORACLE_LEGACY_VERSION ?= 4.0.0
export ORACLE_LEGACY_VERSION
jvm-legacy:
	@$(MAKE) --no-print-directory jvm KAFKA_VERSION=$(ORACLE_LEGACY_VERSION)

# The differential tests against Kafka's own Java (tests/java/) once per Kafka version, then the docs table
# (docs/java-versions.md) generated from those runs. `make test` runs them at the pinned version only.
JAVA_MATRIX ?= 3.9.1 4.0.2 4.4.0
java-matrix: $(VENV)/.installed-test jvm-legacy
	@rm -rf jvm/target/java-matrix && mkdir -p jvm/target/java-matrix
	@for v in $(JAVA_MATRIX); do \
	  $(MAKE) --no-print-directory jvm KAFKA_VERSION=$$v || exit 1; \
	  KAFKA_VERSION=$$v $(BIN)/pytest tests/java -p no:cacheprovider -q -rA \
	    --junitxml=jvm/target/java-matrix/kafka-$$v.xml $(PYTEST_ARGS); \
	done; \
	$(PY) tests/java/version_table.py jvm/target/java-matrix docs/java-versions.md

$(PY):
	@$(PYTHON) -c 'import sys; sys.exit(0 if sys.version_info >= (3, 11) else "assignors needs Python 3.11 or newer")'
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip

# pyspark 4.x is a source archive that pip builds once (about a minute); the stamp keeps it once per venv.
$(VENV)/.installed-test: pyproject.toml | $(PY)
	$(PY) -m pip install --quiet -e '.[testing,spark,collect,kafka-python,aiokafka]' --group dev
	@touch $@

$(VENV)/.installed-bench: pyproject.toml | $(PY)
	$(PY) -m pip install --quiet -e '.[bench,spark,testing]'
	@touch $@

$(VENV)/.installed: pyproject.toml | $(PY)
	$(PY) -m pip install --quiet -e '.[spark]'
	@touch $@

demo: $(VENV)/.installed
	$(BIN)/assignors demo --out demo-output

# A real Kafka broker on 127.0.0.1 and real groups (joins, a crash, a scale-out, a KIP-848 group): their own
# __consumer_offsets collected, then evaluated with --actual (spark_udfs/demo/kafka_demo.py). The test venv: it has the
# Kafka clients and Spark.
KAFKA_DEMO_OUT ?= kafka-demo-output
kafka-demo: $(VENV)/.installed-test jvm
	$(PY) -m spark_udfs.demo.kafka_demo --classpath $(JVM_BUILD)/classpath.txt --out $(KAFKA_DEMO_OUT)

lint: $(VENV)/.installed-test
	$(BIN)/ruff check src tests benchmarks calibration
	$(BIN)/ruff format --check src tests benchmarks calibration

typecheck: $(VENV)/.installed-test
	$(BIN)/mypy

# The Spark tests share one xdist worker (xdist_group "spark"): one local JVM and one Spark Connect server.
unit: $(VENV)/.installed-test jvm jvm-legacy
	$(BIN)/pytest -n 2 --dist loadgroup -m 'not integration and not cluster' --durations=15 $(PYTEST_ARGS)

# Part of unit, on their own: the Spark Connect runs.
connect: $(VENV)/.installed-test
	$(BIN)/pytest -m connect $(PYTEST_ARGS)

# The README's recipe on a Spark standalone cluster (a master, two workers, then a Connect server on them; about
# 4 minutes of both cores). Not part of `make test`, which it would push past 15 minutes on 2 cores; CI runs it
# right after (.ci/run).
cluster: $(VENV)/.installed-test
	$(BIN)/pytest -m cluster $(PYTEST_ARGS)

# Part of test: everything that runs against a real Apache Kafka broker (assignors.testing.KafkaBroker).
kafka-test: $(VENV)/.installed-test jvm
	$(BIN)/pytest -n 3 --dist load --maxschedchunk 1 -m kafka $(PYTEST_ARGS)

# Real consumer groups on a real Kafka broker (one per worker, assignors.testing.KafkaBroker, ~0.4 GB each), and
# collect reading that broker's own __consumer_offsets. They mostly wait for rebalances, so 3 run at once, each handed out as a
# worker frees up (a long scenario never queues behind another); 3 brokers and the faults scenarios' member
# processes fit 2 cores beside the unit suite.
integration: $(VENV)/.installed-test jvm
	$(BIN)/pytest -n 3 --dist load --maxschedchunk 1 -m integration --durations=15 $(PYTEST_ARGS)

# unit and integration at the same time: the real groups spend most of their time waiting for rebalances and
# session timeouts, so beside the unit suite they cost it little. Each prints its output when it ends
# (--output-sync).
test: lint typecheck
	@$(MAKE) --no-print-directory -j2 --output-sync=target unit integration

# The core suite as a user of the kit has it: only the `testing` extra, no Spark, no Kafka clients
# (their tests skip at their conftests). CI runs it beside `make test`.
CORE_VENV ?= .venv-core
core-test: pyproject.toml
	@test -x $(CORE_VENV)/bin/python || $(PYTHON) -m venv $(CORE_VENV)
	$(CORE_VENV)/bin/python -m pip install --quiet --upgrade pip
	$(CORE_VENV)/bin/python -m pip install --quiet -e '.[testing]' --group tests
	HYPOTHESIS_PROFILE=ci-quick $(CORE_VENV)/bin/pytest -n 2 -m 'not integration' -p no:cacheprovider $(PYTEST_ARGS)

# The documentation site (mkdocs, --strict: any warning fails) into site/.
docs: $(VENV)/.installed-test
	$(BIN)/mkdocs build --strict --site-dir site

# Kafka's own Java assignors are timed beside ours (benchmarks/java.py) when java and mvn build jvm/; without them
# the bench says so in one line and runs our rows only. BENCH_ARGS: e.g. --only sticky, --skip kafka-python.
BENCH_ARGS ?=
bench: $(VENV)/.installed-bench
	@if command -v java >/dev/null 2>&1 && command -v mvn >/dev/null 2>&1; then $(MAKE) --no-print-directory jvm || true; fi
	$(PY) -m benchmarks $(BENCH_ARGS)

# Real consumer groups on a local broker (one per strategy and scenario, calibration/scenarios.py), measured, and the
# same histories through the evaluation's replay and pause model: docs/calibration.md (about 17 minutes on 2 cores,
# three strategies' groups at a time). A run whose settled groups stalled over 1% of their partition-seconds (the
# machine could not keep up) writes nothing but the raw runs and exits 1. The raw runs go to calibration/runs.json
# (not committed); CALIBRATE_ARGS: e.g. --scenarios leave,crash or --at-once 2.
CALIBRATE_ARGS ?=
calibrate: $(VENV)/.installed-test jvm
	$(PY) -m calibration $(CALIBRATE_ARGS)

clean:
	rm -rf $(VENV) $(CORE_VENV) .mypy_cache .ruff_cache .pytest_cache .hypothesis
