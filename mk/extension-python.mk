# extension-python: examples/python-ext, a CPython C extension (hev2ext) over
# libhev2, built with setuptools from `pkg-config --cflags --libs hev2`
# alone: PKG_CONFIG_PATH=$(BUILD) makes pkg-config read this tree's
# hev2-uninstalled.pc (mk/capi.mk), as it would read an installed hev2.pc.
# The built module finds libhev2.so.1 through LD_LIBRARY_PATH, as any
# program linked against an uninstalled library does.
EXT_PY_DIR   := examples/python-ext
EXT_PY_BUILD := $(BUILD)/python-ext
# The Pythons the suite uses (mk/python.mk, read after this file: hence =):
# one build of the module each.
EXT_PYTHONS   = $(PYTHON_DEB)
DEB_PACKAGES += python3-dev python3-setuptools pkg-config gcc

EXTENSION_TEST_TARGETS  += test-extension-python
EXTENSION_BENCH_TARGETS += bench-extension-python

# The tree's C rules (-Werror) through setuptools' own CFLAGS hook.
EXT_PY_BUILD_ENV := PKG_CONFIG_PATH=$(abspath $(BUILD)) CFLAGS="-Wall -Wextra -Werror"
EXT_PY_RUN_ENV   := LD_LIBRARY_PATH=$(abspath $(BUILD)) PYTHONDONTWRITEBYTECODE=1
# A Python's build directory: its cache tag (cpython-311), one per Python.
EXT_PY_TAG = $$($$py -c 'import sys; print(sys.implementation.cache_tag)')

.PHONY: extension-python test-extension-python bench-extension-python

extension-python: capi-lib $(BUILD)/hev2-uninstalled.pc ## build examples/python-ext for each Python of the suite (setup.py build_ext, flags from pkg-config alone)
	@set -e; for py in $(EXT_PYTHONS); do \
		out=$(abspath $(EXT_PY_BUILD))/$(EXT_PY_TAG); \
		echo "hev2ext for $$py: $$out"; \
		(cd $(EXT_PY_DIR) && env $(EXT_PY_BUILD_ENV) $$py setup.py -q build_ext --build-lib "$$out" --build-temp "$$out.tmp"); \
	done

# The build's missing-dependency errors (one line each), then the suite on
# each Python: the blocking form (tests/test_blocking.py) and the asyncio
# form (tests/test_asyncio.py), warnings as errors.
test-extension-python: extension-python ## examples/python-ext: setup.py's pkg-config errors, then its unittest suite on each Python
	@set -e; for py in $(EXT_PYTHONS); do \
		out=$$(cd $(EXT_PY_DIR) && env PATH=/nonexistent $$py setup.py -q build_ext --build-temp $(abspath $(EXT_PY_BUILD))/nopc 2>&1) && exit 1; \
		echo "$$out" | grep -q '^hev2ext: pkg-config is not installed' || { echo "no pkg-config: $$out"; exit 1; }; \
		out=$$(cd $(EXT_PY_DIR) && env PKG_CONFIG_PATH= PKG_CONFIG_LIBDIR=/nonexistent $$py setup.py -q build_ext --build-temp $(abspath $(EXT_PY_BUILD))/nohev2 2>&1) && exit 1; \
		echo "$$out" | grep -q '^hev2ext: pkg-config cannot find hev2' || { echo "no hev2: $$out"; exit 1; }; \
		echo "setup.py without pkg-config, without hev2: one clear line each"; \
		env $(EXT_PY_RUN_ENV) PYTHONPATH=$(abspath $(EXT_PY_BUILD))/$(EXT_PY_TAG) \
			$$py -W error -m unittest discover -s $(EXT_PY_DIR)/tests -t $(EXT_PY_DIR)/tests; \
	done

# The shim that stamps the packaged binding's finish moment in C (see
# bench/bench_latency.py), built with the same pkg-config line.
$(EXT_PY_BUILD)/bench_shim.so: $(EXT_PY_DIR)/bench/bench_shim.c include/hev2.h $(BUILD)/hev2-uninstalled.pc capi-lib
	@mkdir -p $(dir $@)
	$(CC) -std=gnu11 -O2 -Wall -Wextra -Werror -shared -fPIC -o $@ $< $$(PKG_CONFIG_PATH=$(abspath $(BUILD)) pkg-config --cflags --libs hev2)

bench-extension-python: extension-python $(EXT_PY_BUILD)/bench_shim.so ## completion latency: the library's finish to Python's completion, hev2ext's forms beside hev2.create_connection and hev2.aio
	@set -e; for py in $(EXT_PYTHONS); do \
		$(FRESH_NETNS) env $(EXT_PY_RUN_ENV) $(PYTHON_ENV) \
			PYTHONPATH=$(abspath $(EXT_PY_BUILD))/$(EXT_PY_TAG):$(abspath $(PYTHON_DIR)/src):$(abspath $(PYTHON_DIR)/bench) \
			BENCH_SHIM=$(abspath $(EXT_PY_BUILD))/bench_shim.so $$py $(EXT_PY_DIR)/bench/bench_latency.py; \
	done

# The extension's types (src/hev2ext.pyi), its tests and its benchmark under
# mypy --strict, as the package's (mk/lint.mk); part of `make lint`.
EXT_PY_MYPY = MYPYPATH=$(EXT_PY_DIR)/src:$(PYTHON_DIR)/src:$(PYTHON_DIR)/bench $(PYTHON_DEB) -m mypy --strict --cache-dir=/dev/null \
	$(EXT_PY_DIR)/src/hev2ext.pyi $(EXT_PY_DIR)/tests $(EXT_PY_DIR)/bench/bench_latency.py
lint: lint-extension-python
.PHONY: lint-extension-python
lint-extension-python: ## mypy --strict on examples/python-ext (its .pyi, tests and benchmark)
	$(EXT_PY_MYPY)
