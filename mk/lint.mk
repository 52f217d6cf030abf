# lint: every static check of the tree in one target (part of `make test`).
#   Go      gofmt -l, go vet ./..., staticcheck (pinned, from the module proxy)
#   shell   shellcheck on every *.sh, scripts/* and every file with a sh shebang
#   Python  mypy --strict on the package (mk/python.mk's PYTHON_MYPY), and
#           every .py of the tree compiled with warnings as errors
#   Ruby    ruby -wc on every .rb of the gem and the examples (a warning fails)
#   make    every phony target has a `## ...` line for `make help`
#   version the gem's and the Python package's versions are include/hev2.h's
TEST_TARGETS += lint
DEB_PACKAGES += shellcheck python3 python3-mypy ruby

# staticcheck is fetched and built by the go command from the module proxy
# (honnef.co/go/tools is served there); the version is pinned so that a new
# release's checks do not fail an unchanged tree. Its first run downloads and
# builds it (about two minutes); later runs use the go build cache.
STATICCHECK_VERSION := v0.8.2
STATICCHECK         := $(GO) run honnef.co/go/tools/cmd/staticcheck@$(STATICCHECK_VERSION)

# Files of the tree, build directories and .git left out.
LINT_FIND = find . -type d \( -name .git -o -name 'build' -o -name 'build-*' -o -name __pycache__ \) -prune -o -type f
LINT_SHELL_FILES = $(shell $(LINT_FIND) \( -name '*.sh' -o -path './scripts/*' -o -perm -u+x \) -print | \
	xargs awk 'FNR == 1 { if (FILENAME ~ /\.sh$$/ || $$0 ~ /^\#!(\/usr)?\/bin\/(env )?(ba|da)?sh( |$$)/) print FILENAME; nextfile }' | sort)
# The directories whose Ruby files are linted; lint-paths fails when one is
# gone, so that a move never turns a check into a silent no-op. Appended to
# (+=): an mk file included before this one may have added its own.
LINT_RUBY_DIRS   += bindings/ruby examples/ruby
LINT_RUBY_FILES  = $(shell $(LINT_FIND) \( -name '*.rb' -o -name '*.gemspec' -o -perm -u+x \) -print | \
	grep -E '^\./($(subst $(space),|,$(strip $(LINT_RUBY_DIRS))))/' | \
	xargs awk 'FNR == 1 { if (FILENAME ~ /\.(rb|gemspec)$$/ || $$0 ~ /^\#!.*[\/ ]ruby( |$$)/) print FILENAME; nextfile }' | sort)
LINT_PY_FILES    = $(shell $(LINT_FIND) -name '*.py' -print | sort)

space := $(empty) $(empty)

.PHONY: lint lint-go lint-shell lint-python lint-ruby lint-make lint-versions lint-paths lint-deps
lint: lint-paths lint-deps lint-go lint-shell lint-python lint-ruby lint-make lint-versions ## every static check: Go, shell, Python, Ruby, make help, versions
	@echo "lint: clean"

# Every path a lint rule names exists (LINT_PATHS: directories and files
# named above and by the parts' mk files).
LINT_PATHS = $(LINT_RUBY_DIRS) $(LINT_VERSION_FILES)
lint-paths: ## every directory or file a lint rule names exists
	@missing=0; for p in $(LINT_PATHS); do \
		[ -e "$$p" ] || { echo "lint: $$p is named by a lint rule and does not exist"; missing=1; }; \
	done; [ $$missing = 0 ] && echo "lint paths: $(words $(LINT_PATHS)) exist"

# The product (core, the engine under internal/, and capi, whose libhev2.so
# ships) depends on none of the proof: no test bed, test DNS server, test
# helper, tool or benchmark.
# Outside the standard library the product links only the modules of
# LINT_PRODUCT_MODULES: every other dependency is the tests' (a new one for
# the product is a decision, made here, not by an import).
LINT_PRODUCT_PKGS = $(shell $(GO) list ./core/... ./internal/... ./capi/...)
LINT_PRODUCT_MODULES = github.com/hev2/hev2 golang.org/x/sys golang.org/x/net
lint-deps: ## no production package (core, internal, capi) imports a test, tool or benchmark package, nor a module outside LINT_PRODUCT_MODULES (go list -deps)
	@bad=$$($(GO) list -deps $(LINT_PRODUCT_PKGS) | grep '^github.com/hev2/hev2/' | \
		grep -Ev '^github.com/hev2/hev2/(core|internal|capi)(/|$$)' ); \
	if [ -n "$$bad" ]; then echo "production packages import proof:"; echo "$$bad"; exit 1; fi; \
	mods=$$($(GO) list -deps -f '{{if .Module}}{{.Module.Path}}{{end}}' $(LINT_PRODUCT_PKGS) | sort -u); \
	for m in $$mods; do case " $(LINT_PRODUCT_MODULES) " in *" $$m "*) ;; *) echo "production packages link module $$m (not in LINT_PRODUCT_MODULES)"; exit 1;; esac; done; \
	echo "deps: $(words $(LINT_PRODUCT_PKGS)) production packages import no test, tool or benchmark package; modules linked: $$(echo $$mods)"

lint-go: ## gofmt -l, go vet ./... and staticcheck ./... over the Go module
	@out=$$(gofmt -l $$($(GO) list -f '{{.Dir}}' ./...) | sort -u); \
	if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi
	$(GO) vet ./...
	$(STATICCHECK) ./...

lint-shell: ## shellcheck on every shell script of the tree
	shellcheck $(LINT_SHELL_FILES)

lint-python: ## mypy --strict on bindings/python/src, every .py compiled with -W error
	$(PYTHON_MYPY)
	@$(PYTHON_DEB) -W error -c 'import pathlib, sys; [compile(pathlib.Path(f).read_bytes(), f, "exec") for f in sys.argv[1:]]' $(LINT_PY_FILES)
	@echo "python: $(words $(LINT_PY_FILES)) files compile without a warning"

lint-ruby: ## ruby -wc on every Ruby file of the gem, its tests and the examples
	@set -e; for f in $(LINT_RUBY_FILES); do \
		out=$$(ruby -wc "$$f" 2>&1); \
		if [ "$$out" != "Syntax OK" ]; then echo "$$f: $$out"; exit 1; fi; \
	done; echo "ruby: $(words $(LINT_RUBY_FILES)) files Syntax OK, no warning"

# The phony targets make knows against the ones `make help` lists.
lint-make: ## every phony target of Makefile and mk/*.mk has a `## ...` help line
	@phony=$$($(MAKE) --no-print-directory -pRrq -f Makefile __lint_none__ 2>/dev/null | sed -n 's/^\.PHONY: //p' | tr ' ' '\n' | grep . | sort -u); \
	documented=$$(awk -F ':' '/^[A-Za-z0-9_.-]+:([^=]|$$).*## / { print $$1 }' $(MAKEFILES_WITH_HELP) | sort -u); \
	missing=$$(printf '%s\n' "$$phony" | grep -vxF "$$documented" || true); \
	if [ -n "$$missing" ]; then echo "phony targets without a ## help line:"; echo "$$missing"; exit 1; fi; \
	echo "make: $$(printf '%s\n' "$$phony" | wc -l) phony targets, each with a help line"

# One version: HEV2_VERSION_MAJOR.MINOR.PATCH of include/hev2.h (CAPI_VERSION,
# mk/capi.mk, which also gives the SONAME and hev2.pc). The gem and the Python
# package state it as a literal (their build tools read it without loading
# anything); this fails when one of them differs.
LINT_VERSION_FILES  = $(RUBY_DIR)/lib/hev2/version.rb $(PYTHON_DIR)/pyproject.toml $(PYTHON_DIR)/src/hev2/__init__.py
lint-versions: ## the gem's and the Python package's versions equal hev2.h's HEV2_VERSION_*
	@echo "$(CAPI_VERSION)" | grep -Eqx '[0-9]+\.[0-9]+\.[0-9]+' || \
		{ echo "include/hev2.h: HEV2_VERSION_MAJOR/MINOR/PATCH not found (got '$(CAPI_VERSION)')"; exit 1; }
	@bad=0; for f in $(LINT_VERSION_FILES); do \
		v=$$(sed -n -E 's/^ *(VERSION|version|__version__) = "([^"]*)".*/\2/p' "$$f"); \
		if [ "$$v" != "$(CAPI_VERSION)" ]; then echo "$$f: version '$$v', include/hev2.h says $(CAPI_VERSION)"; bad=1; fi; \
	done; [ $$bad = 0 ] && echo "versions: hev2.h, SONAME libhev2.so.$(CAPI_SOVERSION), hev2.pc, gem, Python package: $(CAPI_VERSION)"
