# python: the hev2 package (bindings/python) over libhev2.so via ctypes.
# Debian's Python and pytest, not pyenv's python3 on PATH.
PYTHON_DEB   := /usr/bin/python3
PYTHON_DIR   := bindings/python
PYTHON_ENV   := HEV2_LIBRARY=$(CURDIR)/$(BUILD)/libhev2.so PYTHONPATH=$(CURDIR)/$(PYTHON_DIR)/src PYTHONDONTWRITEBYTECODE=1
TEST_TARGETS  += test-python
BENCH_TARGETS += bench-python
DEB_PACKAGES  += python3 python3-pytest util-linux gcc

.PHONY: test-python bench-python python-need-lib
python-need-lib:
	@test -f $(BUILD)/libhev2.so || { echo "test-python: $(BUILD)/libhev2.so is missing: run 'make build' first"; exit 1; }

test-python: python-need-lib
	$(PYTHON_ENV) $(PYTHON_DEB) -m pytest -q -p no:cacheprovider $(PYTHON_DIR)/tests

bench-python: python-need-lib
	$(PYTHON_ENV) $(PYTHON_DEB) $(PYTHON_DIR)/bench/bench_connect.py
