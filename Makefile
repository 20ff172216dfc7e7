# StarAgent: run and watch coding-agent CLIs in tmux across machines from one browser tab.
SHELL := bash
.SHELLFLAGS := -eu -o pipefail -c
.ONESHELL:
.DELETE_ON_ERROR:
.DEFAULT_GOAL := help
MAKEFLAGS += --warn-undefined-variables --no-builtin-rules

BIN := node_modules/.bin
HOST ?= 127.0.0.1
PORT ?= 8080

.PHONY: help
help: ## Show the targets
	@grep -E '^[a-z][a-z-]*:.*## ' $(MAKEFILE_LIST) | awk -F ':.*## ' '{printf "  make %-12s %s\n", $$1, $$2}'

node_modules/.installed: package-lock.json package.json web/package.json
	npm ci --no-audit --no-fund
	touch $@

.PHONY: install
install: node_modules/.installed system-deps ## Install npm packages and the system tools (tmux) StarAgent needs

# Installs the Debian packages named in $(1) that are missing (with root and apt-get), or says how.
define apt_install
	@missing=""
	for pkg in $(1); do command -v "$$pkg" >/dev/null || missing="$$missing $$pkg"; done
	if [ -n "$$missing" ]; then
		if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
			apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $$missing
		else
			echo "missing:$$missing (Debian/Ubuntu: sudo apt-get install -y$$missing)" >&2; exit 1
		fi
	fi
endef

.PHONY: system-deps
system-deps: ## Install tmux from Debian when it is missing (needs root; otherwise says how)
	$(call apt_install,tmux)

.PHONY: browser-deps
browser-deps: ## Install chromium from Debian when it is missing, for the dashboard's tests and benchmark
	$(call apt_install,chromium)
	# A desktop notification service on a private D-Bus for the push tests (test/e2e/support/desktop-notifications.py).
	if ! command -v dbus-daemon >/dev/null || ! /usr/bin/python3 -c 'import dbus, gi' 2>/dev/null; then
		if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
			apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq dbus python3-dbus python3-gi
		else
			echo "missing: dbus-daemon, python3-dbus or python3-gi (Debian/Ubuntu: sudo apt-get install -y dbus python3-dbus python3-gi)" >&2; exit 1
		fi
	fi

# The dashboard (Lit, built by Vite into web/dist, served by the Hub). Rebuilt only when its sources,
# its build config or the generated API code change.
WEB_SOURCES := $(shell find web/src web/public -type f 2>/dev/null) web/index.html web/vite.config.ts \
	web/tsconfig.json $(shell find gen/staragent -name '*.ts' 2>/dev/null)

web/dist/index.html: node_modules/.installed $(WEB_SOURCES)
	cd web && ../$(BIN)/vite build --logLevel warn

.PHONY: web
web: web/dist/index.html ## Build the dashboard into web/dist (pre-compressed, hashed assets)

# ccache lets the package test (test/package/install.test.ts) compile node-pty and better-sqlite3 (SQLite
# is one 9 MB C file) for real once per machine, then hit the cache: about 4 minutes, then 15 s. Optional:
# without it (no root) that test still passes, only slower.
.PHONY: ccache
ccache: ## Install ccache from Debian when missing and root (speeds up the package test)
	@if ! command -v ccache >/dev/null && [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
		apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq ccache
	fi

.PHONY: generate
generate: node_modules/.installed ## Regenerate gen/ from proto/ (buf generate)
	PATH="$(CURDIR)/$(BIN):$$PATH" $(BIN)/buf generate

# The services run compiled: scripts/build.mjs bundles the command (services/, gen/ and the pure-JS
# packages, one chunk per command) into dist/ with source maps, in about 0.3 s; type-checking is tsc's
# job in `make lint`.
.PHONY: build
build: node_modules/.installed web/dist/index.html ## Compile services/ and gen/ into dist/ (bundled JavaScript with source maps) and build the dashboard
	node scripts/build.mjs

.PHONY: lint
lint: node_modules/.installed ## Biome, the import direction rules, buf lint, buf breaking against main, stale gen/ check, tsc (services, dashboard, e2e tests)
	$(BIN)/biome check .
	# The repository cites only itself: a fact taken from notes kept outside it goes into docs/ first.
	if git grep -n -E '\b(DESIGN|FORMATS|STACK|FIELD-NOTES|CLI-NOTES|DASHBOARD-NOTES)\.md\b' -- ':!Makefile'; then
		echo "the lines above cite notes outside the repository: move the fact into docs/ and cite that" >&2; exit 1
	fi
	# Imports point down only, and no file cycles (docs/architecture.md, "Layers"): web → gen; cli → gen,
	# common; hub → the Node's entry point; the rules inside services/node/. A failure names the rule.
	$(BIN)/depcruise --config .dependency-cruiser.cjs --output-type err services web
	# The dashboard's sizes (docs/architecture.md, "The dashboard's layers"): no file in web/src over 350 lines, no
	# component (a non-test file under web/src/components) over 300.
	big="$$(find web/src -name '*.ts' -exec awk 'FNR==1 && NR>1 {print f, n} {f=FILENAME; n=FNR} END {print f, n}' {} + \
		| awk '$$2 > 350 || ($$1 ~ /^web\/src\/components\// && $$1 !~ /\.test\.ts$$/ && $$2 > 300)')"
	if [ -n "$$big" ]; then echo "over the dashboard's size limits (350 lines a file, 300 a component):" >&2; echo "$$big" >&2; exit 1; fi
	$(BIN)/buf lint
	# Breaking changes: the working tree against where it left main (the merge base, so a branch is not
	# blamed for what main added since), and the newest commit against the one before it (on main itself
	# the first comparison sees only uncommitted changes).
	base="$$(git merge-base HEAD main 2>/dev/null || true)"
	if [ -n "$$base" ] && git cat-file -e "$$base:proto/staragent" 2>/dev/null; then
		$(BIN)/buf breaking --against ".git#ref=$$base"
	fi
	if git cat-file -e HEAD~1:proto/staragent 2>/dev/null; then
		$(BIN)/buf breaking --against '.git#ref=HEAD~1'
	fi
	rm -rf .tmp/gen-check && mkdir -p .tmp/gen-check
	PATH="$(CURDIR)/$(BIN):$$PATH" $(BIN)/buf generate -o .tmp/gen-check
	diff -r .tmp/gen-check/gen gen || { echo "gen/ is stale: run 'make generate' and commit it" >&2; exit 1; }
	$(BIN)/tsc -p tsconfig.json
	$(BIN)/tsc -p web/tsconfig.json
	$(BIN)/tsc -p test/e2e/tsconfig.json

.PHONY: test
test: install browser-deps lint build ccache ## Lint, then every test (unit, integration against real tmux and servers, the dashboard in chromium), then compat
	$(BIN)/vitest run --exclude '$(COMPAT_DIR)/**'
	if $(MAKE) --no-print-directory $(COMPAT_DIR)/node_modules/.installed; then
		$(MAKE) --no-print-directory compat
	else
		echo "" >&2
		echo "*** The compatibility suite (make compat) did NOT run: npm could not install into $(COMPAT_DIR) the" >&2
		echo "*** pinned agent CLIs (see npm's error above; it needs the npm registry). It is not counted" >&2
		echo "*** as passed: run 'make compat' on a machine that reaches the registry." >&2
	fi

# The real agent CLIs at pinned versions, for the compatibility suite (docs/compat.md). Installed only
# when their lock changes. opencode's install script writes into HOME, so npm runs with a throwaway
# one while still reading the user's npm settings and cache. `npm install --no-save` with the lock
# rather than `npm ci`: registries that serve only this platform's opencode binaries leave the lock
# without the other platforms' optional packages, which `npm ci` rejects as out of sync.
COMPAT_DIR := test/compat

$(COMPAT_DIR)/node_modules/.installed: $(COMPAT_DIR)/package-lock.json $(COMPAT_DIR)/package.json
	user_home="$$HOME"
	scratch_home="$$(mktemp -d)"
	trap 'rm -rf "$$scratch_home"' EXIT
	cd $(COMPAT_DIR)
	HOME="$$scratch_home" npm_config_userconfig="$$user_home/.npmrc" npm_config_cache="$$user_home/.npm" \
		npm install --no-save --no-audit --no-fund
	cd "$(CURDIR)"
	touch $@

.PHONY: screenshots
screenshots: install browser-deps build ## Retake the dashboard screenshots in docs/screenshots (the README's) from the end-to-end tests
	STARAGENT_UPDATE_SCREENSHOTS=1 $(BIN)/vitest run test/e2e/dashboard.test.ts test/e2e/terminal.test.ts

.PHONY: compat
compat: install build $(COMPAT_DIR)/node_modules/.installed ## The real agent CLIs (docs/compat.md) in tmux against mock model APIs: status, prompts and chat at each step, alone and two per folder
	$(BIN)/vitest run --config $(COMPAT_DIR)/vitest.config.ts

# make fuzz: many more seeded cases per target than make test runs (it uses a fixed seed and few cases).
FUZZ_RUNS ?= 10000
FUZZ_SEED ?=

.PHONY: fuzz
fuzz: install ## Fuzz every parser fed from outside (FUZZ_RUNS cases per target; FUZZ_SEED=n replays a run)
	seed="$(FUZZ_SEED)"
	if [ -z "$$seed" ]; then seed="$$(od -An -N4 -tu4 /dev/urandom | tr -d ' ')"; fi
	echo "fuzz seed $$seed, $(FUZZ_RUNS) cases per target (replay: make fuzz FUZZ_SEED=$$seed)"
	STARAGENT_FUZZ_SEED="$$seed" STARAGENT_FUZZ_RUNS="$(FUZZ_RUNS)" $(BIN)/vitest run test/fuzz --testTimeout=0

.PHONY: bench
bench: install browser-deps build ## Run the benchmarks and print the figures recorded in docs/benchmarks.md
	node --import tsx bench/run.ts

.PHONY: load
load: install build ## Load test (not part of test): 3 Nodes x 300 sessions, 20 viewers, chat, watches; fails on lost input, errors or leaks
	node --import tsx bench/load.ts

.PHONY: run
run: install build ## Start the Hub on HOST:PORT (default 127.0.0.1:8080) and print how to log in
	node dist/staragent.js hub --host $(HOST) --port $(PORT)

.PHONY: dev
dev: install web/dist/index.html ## Like run, but from the TypeScript sources (tsx), restarting the Hub when a file changes
	$(BIN)/tsx watch services/bin/staragent.ts hub --host $(HOST) --port $(PORT)

# One tarball a worker machine installs with `npm install -g ./staragent-<version>.tgz`. npm pack runs
# package.json's prepack (web's `build` script: the dashboard lands in web/dist, which the package
# includes) and prepare (the services build); the package test (test/package/install.test.ts) runs this
# target in a fresh clone.
.PHONY: package
package: install ## Build and pack staragent-<version>.tgz: compiled services, dashboard, protos, generated code
	npm pack --no-fund
	test -f web/dist/index.html || { echo "make package: web/dist/index.html was not built" >&2; exit 1; }

.PHONY: clean
clean: ## Remove build output and scratch files (never user state in ~/.staragent)
	rm -rf .tmp web/dist coverage dist staragent-*.tgz
