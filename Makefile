# Entry points for people and CI. `make test` is what .ci/run runs.
SHELL := /bin/bash
VENV := .venv
BIN := $(CURDIR)/$(VENV)/bin
export PATH := $(BIN):$(PATH)
export ANSIBLE_COLLECTIONS_PATH := $(CURDIR)/.collections
export ANSIBLE_CONFIG := $(CURDIR)/ansible.cfg
PYTEST_ARGS ?=

.PHONY: setup test unit lint sanity docs-check bench

setup:
	@tests/setup.sh

test: setup lint sanity docs-check
	$(BIN)/pytest $(PYTEST_ARGS)

unit: setup
	$(BIN)/pytest tests/unit $(PYTEST_ARGS)

lint: setup
	$(BIN)/ansible-lint --profile production --offline

# ansible-test wants the collection at ansible_collections/<ns>/<name>: sanity runs on a copy of what git
# would commit (tracked and untracked-not-ignored files).
sanity: setup
	@rm -rf .build && mkdir -p .build/ansible_collections/kubeadm/control_plane
	@git ls-files -z -co --exclude-standard | tar --null -T - -cf - | tar -xf - -C .build/ansible_collections/kubeadm/control_plane
	cd .build/ansible_collections/kubeadm/control_plane && $(BIN)/ansible-test sanity --python 3.11 --local --color no

# Every module's documentation must render.
docs-check: setup
	@set -e; for m in plugins/modules/*.py; do n=$$(basename $$m .py); \
	  $(BIN)/ansible-doc kubeadm.control_plane.$$n > /dev/null || { echo "ansible-doc failed for $$n"; exit 1; }; done; \
	  echo "docs-check: every module renders"

bench: setup
	@set -e; for b in bench/*.py; do echo "== $$b"; $(BIN)/python $$b; done
