# Entry points for people and CI. `make test` is what .ci/run runs.
SHELL := /bin/bash
VENV := .venv
BIN := $(CURDIR)/$(VENV)/bin
export PATH := $(BIN):$(PATH)
export ANSIBLE_COLLECTIONS_PATH := $(CURDIR)/.collections
export ANSIBLE_CONFIG := $(CURDIR)/ansible.cfg
PYTEST_ARGS ?=

.PHONY: setup test unit lint sanity docs-check bench test-sandbox mutation

setup:
	@tests/setup.sh

# The whole suite. The sandbox's tests (tests/sandbox) and the end-to-end tests on it (tests/e2e) need root.
# The sandbox's own tests share sandboxes across files, so they run in one process, beside two more: lint, sanity
# and the docs check, and the unit and integration tests (their etcd clusters and servers take loopback addresses no
# other process holds). Measured on a 2-core machine, the sandbox's tests take as long as the other two in a row,
# with a third of the CPU idle; three streams fill it, so sanity for every supported Python fits in the same time.
# The output of the two in the background follows. Every part runs, and any failure fails.
# The end-to-end modules, each with a sandbox of its own, run on three workers a module each (--dist loadfile): on
# two they no longer fit CI's hour (measured: 47 min of end-to-end tests on two workers, 36 min on three, on a 2-core
# machine: they wait on the emulated control plane more than they compute). The longest go first (E2E_FIRST, in this
# order: xdist would otherwise order them by their number of tests), so the workers end together: the order is that
# of the times the run prints at its end ("end-to-end modules by time", tests/e2e/conftest.py); list a new module here.
E2E_FIRST := tests/e2e/test_flows.py tests/e2e/test_remediation.py tests/e2e/test_disaster_recovery.py tests/e2e/test_workers.py tests/e2e/test_external_etcd.py tests/e2e/test_rollout.py tests/e2e/test_providers.py tests/e2e/test_upgrade_in_place.py tests/e2e/test_host_lost.py tests/e2e/test_certificates.py tests/e2e/test_rollout_reasons.py tests/e2e/test_adoption.py tests/e2e/test_kubeadm_roles.py tests/e2e/test_etcd_tag.py tests/e2e/test_node_upgrade.py tests/e2e/test_molecule.py tests/e2e/test_node_software.py tests/e2e/test_awx_runner.py
test: setup
	@log=$$(mktemp); checks_log=$$(mktemp); \
	  $(BIN)/pytest tests/sandbox $(PYTEST_ARGS) > $$log 2>&1 & sandbox=$$!; \
	  $(MAKE) --no-print-directory lint sanity docs-check > $$checks_log 2>&1 & checks=$$!; \
	  $(MAKE) --no-print-directory unit UNIT_WORKERS=1; unit=$$?; $(BIN)/pytest tests/integration $(PYTEST_ARGS); rest=$$?; \
	  wait $$checks; checks=$$?; echo "== lint, sanity, docs-check"; cat $$checks_log; rm -f $$checks_log; \
	  wait $$sandbox; own=$$?; echo "== tests/sandbox"; cat $$log; rm -f $$log; \
	  test $$checks -eq 0 -a $$unit -eq 0 -a $$rest -eq 0 -a $$own -eq 0
	$(BIN)/pytest -n 3 --dist loadfile --no-loadscope-reorder $(E2E_FIRST) $(filter-out $(E2E_FIRST),$(sort $(wildcard tests/e2e/test_*.py))) $(PYTEST_ARGS)

test-sandbox: setup
	$(BIN)/pytest tests/sandbox $(PYTEST_ARGS)

# The unit tests as ansible-test runs a collection's (`ansible-test units`): on a copy of what git would commit, laid
# out as ansible_collections/kubeadm/control_plane with awx.awx beside it (tests/unit/test_awx_loader.py reads it).
# `pytest tests/unit` runs the same files in place. In `make test` on one worker: beside the sandbox's tests, which
# time real etcd and servers, a second one saturated the CPU (measured: a 2 s etcd answer timed out).
UNIT_WORKERS ?=
unit: setup
	@copy=$$(mktemp -d); trap 'rm -rf "$$copy"' EXIT; dir=$$copy/ansible_collections/kubeadm/control_plane; \
	  mkdir -p $$dir && git ls-files -z -co --exclude-standard | tar --null -T - -cf - | tar -xf - -C $$dir && \
	  cp -r .collections/ansible_collections/awx $$copy/ansible_collections/ && cd $$dir && git init -q && git add -A && \
	  $(BIN)/ansible-test units --python 3.11 --local --color no $(if $(UNIT_WORKERS),--num-workers $(UNIT_WORKERS))

lint: setup
	$(BIN)/ansible-lint --profile production --offline

# ansible-test wants the collection at ansible_collections/<ns>/<name> inside a git work tree: sanity runs on a
# copy of what git would commit (tracked and untracked-not-ignored files). Its pip bootstrap script cannot be
# downloaded here, so an offline one (tests/sanity/get_pip_offline.py) is put where ansible-test caches it.
SANITY_DIR := .build/ansible_collections/kubeadm/control_plane
# Every sanity test runs on the controller's Python (3.11, the oldest ansible-core 2.19 and the collection support
# there); compile and import, the two whose answer depends on the interpreter, run again on the other Pythons a host
# or a controller may have (ansible-core 2.19: 3.8 to 3.13 on hosts, 3.11 to 3.13 on the controller), each in a
# virtual environment of its own.
SANITY_OTHER_PYTHONS := 3.8 3.9 3.10 3.12 3.13
sanity: setup
	@rm -rf .build && mkdir -p $(SANITY_DIR)
	@git ls-files -z -co --exclude-standard | tar --null -T - -cf - | tar -xf - -C $(SANITY_DIR)
	@cd $(SANITY_DIR) && git init -q && git add -A
	@v=$$(grep -o "pip='[0-9.]*'" $(VENV)/lib/python3.11/site-packages/ansible_test/_internal/python_requirements.py | head -1 | tr -dc '0-9.'); \
	  test -n "$$v" || { echo "sanity: cannot tell which pip ansible-test bootstraps"; exit 1; }; \
	  mkdir -p ~/.ansible/test/cache && cp tests/sanity/get_pip_offline.py ~/.ansible/test/cache/get_pip_$${v//./_}.py
	cd $(SANITY_DIR) && $(BIN)/ansible-test sanity --python 3.11 --local --color no
	@set -e; for v in $(SANITY_OTHER_PYTHONS); do \
	  found=; for candidate in $$(ls -d $$HOME/.pyenv/versions/$$v.*/bin/python$$v 2>/dev/null | sort -V -r) $$(command -v python$$v); do \
	    if "$$candidate" -c pass 2>/dev/null; then found=$$candidate; break; fi; done; \
	  if [ -z "$$found" ]; then echo "sanity: no python$$v on this machine: the compile and import tests did not run on it"; continue; fi; \
	  echo "sanity: compile and import on $$found"; \
	  (cd $(SANITY_DIR) && PATH=$$(dirname $$found):$$PATH $(BIN)/ansible-test sanity --test compile --test import --python $$v --venv --color no); \
	done

# Every module's documentation must render.
docs-check: setup
	@set -e; for m in plugins/modules/*.py; do n=$$(basename $$m .py); \
	  $(BIN)/ansible-doc kubeadm.control_plane.$$n > /dev/null || { echo "ansible-doc failed for $$n"; exit 1; }; done; \
	  echo "docs-check: every module renders"

# Mutation run over the decision files, each against its own unit tests (tests/mutation.py); slow, not in `test`.
# MUTATION_ARGS: file names (planner etcd_quorum ...), --skip-kind string, --timeout SECONDS.
MUTATION_ARGS ?=
mutation: setup
	$(BIN)/python tests/mutation.py $(MUTATION_ARGS)

bench: setup
	@set -e; for b in bench/*.py; do echo "== $$b"; $(BIN)/python $$b; done

# The demo sandbox (test and demo infrastructure, tests/sandbox/README.md): 5 hosts over 3 failure domains.
.PHONY: sandbox-up sandbox-down demo
sandbox-up: setup
	tests/sandbox/sandbox up --machines 5 --failure-domains 3

# The main job on the demo sandbox: create a 3-machine control plane of the previous minor over the 3 failure
# domains, scale it to 5 and back to 3, roll it out to the newest minor's first patch, make one machine unhealthy
# (its kubelet stopped) and remediate it, upgrade it in place to the newest patch, then print the status. The
# sandbox's inventory names the hosts and the bundle; tests/demo.yml holds the spec.
DEMO_INVENTORY := /srv/kcp-sandbox/kcp/inventory.ini
DEMO_VERSIONS = $(shell ls /srv/kcp-sandbox/kcp/mirror | sort -V)
DEMO_NEW = $(lastword $(DEMO_VERSIONS))
DEMO_OLD = $(lastword $(filter-out $(basename $(DEMO_NEW)).%,$(DEMO_VERSIONS)))
DEMO_MID = $(firstword $(filter $(basename $(DEMO_NEW)).%,$(DEMO_VERSIONS)))
DEMO_PLAY = $(BIN)/ansible-playbook -i $(DEMO_INVENTORY) -e @tests/demo.yml
demo: sandbox-up
	$(DEMO_PLAY) playbooks/create.yml -e kcp_replicas=3 -e kcp_version=$(DEMO_OLD)
	$(DEMO_PLAY) playbooks/scale.yml -e kcp_replicas=5 -e kcp_version=$(DEMO_OLD)
	$(DEMO_PLAY) playbooks/scale.yml -e kcp_replicas=3 -e kcp_version=$(DEMO_OLD)
	$(DEMO_PLAY) playbooks/rollout.yml -e kcp_replicas=3 -e kcp_version=$(DEMO_MID)
	$(BIN)/python tests/demo_unhealthy.py
	$(DEMO_PLAY) playbooks/remediate.yml -e kcp_replicas=3 -e kcp_version=$(DEMO_MID)
	$(DEMO_PLAY) playbooks/upgrade.yml -e kcp_replicas=3 -e kcp_version=$(DEMO_NEW) -e kcp_upgrade_strategy=in_place
	$(DEMO_PLAY) playbooks/status.yml -e kcp_replicas=3 -e kcp_version=$(DEMO_NEW) -e kcp_upgrade_strategy=in_place

sandbox-down:
	tests/sandbox/sandbox down
