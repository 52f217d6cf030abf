# extensions: the example C extensions of examples/ruby-ext and
# examples/python-ext, which link libhev2 found by pkg-config alone and
# finish a connect through their interpreter's own deferred calls.
# Each has its own mk/extension-<language>.mk that appends its targets;
# those files are included before this one (mk/*.mk in sorted order), so
# the lists are only made here when none did (?=), never emptied.

EXTENSION_TEST_TARGETS  ?=
EXTENSION_BENCH_TARGETS ?=
TEST_TARGETS  += test-extensions
BENCH_TARGETS += bench-extensions

.PHONY: test-extensions bench-extensions

test-extensions: ## build and test both example extensions (examples/ruby-ext, examples/python-ext) from pkg-config alone
	@set -e; for t in $(EXTENSION_TEST_TARGETS); do echo "== $$t"; $(MAKE) --no-print-directory $$t; done

bench-extensions: ## each example extension's completion latency beside the packaged binding's
	@set -e; for t in $(EXTENSION_BENCH_TARGETS); do echo "== $$t"; $(MAKE) --no-print-directory $$t; done
