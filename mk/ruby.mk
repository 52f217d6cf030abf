# ruby: the hev2 gem (bindings/ruby) over libhev2.so, its tests, gem and bench.
RUBY          ?= ruby
RUBY_DIR      := bindings/ruby
RUBY_LIB      := $(abspath $(BUILD)/libhev2.so)
RUBY_GEM_DIR  := $(BUILD)/ruby-gem
RUBY_ENV      := HEV2_LIBRARY=$(RUBY_LIB)

TEST_TARGETS  += test-ruby
BENCH_TARGETS += bench-ruby
DEB_PACKAGES  += ruby ruby-dev ruby-minitest gcc libc6-dev iproute2

RUBY_CLIENT   := /usr/bin/ruby $(abspath $(RUBY_DIR)/bin/hev2-client)
# A column of `make scenarios` (the client finds build/libhev2.so itself).
SCENARIO_CLIENTS += --client "hev2-ruby=$(RUBY_CLIENT)"

.PHONY: test-ruby test-ruby-unit suite-ruby gem-ruby bench-ruby

test-ruby: test-ruby-unit suite-ruby gem-ruby

# The gem's minitest suite, with warnings on, against the freshly built library.
test-ruby-unit: capi-lib
	$(RUBY_ENV) /usr/bin/ruby -w -I$(RUBY_DIR)/lib -I$(RUBY_DIR)/test $(RUBY_DIR)/test/run.rb

# The shared scenario suite through the gem's client command (root only).
suite-ruby: capi-lib testbed-tools
	@if [ "$$(id -u)" != 0 ]; then echo "SKIP: suite-ruby needs root (network namespaces)"; exit 0; fi; \
	$(RUBY_ENV) $(BUILD)/hev2-testbed suite --client "$(RUBY_CLIENT)"

# `gem build` in a staging copy that carries libhev2.so inside the gem, then
# an install into a throwaway GEM_HOME and one connection through it with no
# HEV2_LIBRARY set: proves the gem finds the library it ships.
gem-ruby: capi-lib
	rm -rf $(RUBY_GEM_DIR) && mkdir -p $(RUBY_GEM_DIR)/src
	cp -r $(RUBY_DIR)/hev2.gemspec $(RUBY_DIR)/README.md $(RUBY_DIR)/lib $(RUBY_DIR)/bin $(RUBY_GEM_DIR)/src/
	rm -rf $(RUBY_GEM_DIR)/src/lib/hev2/native && mkdir -p $(RUBY_GEM_DIR)/src/lib/hev2/native
	cp $(BUILD)/libhev2.so $(RUBY_GEM_DIR)/src/lib/hev2/native/
	cd $(RUBY_GEM_DIR)/src && gem build --quiet hev2.gemspec -o ../hev2.gem
	GEM_HOME=$(abspath $(RUBY_GEM_DIR))/home gem install --local --no-document --quiet $(RUBY_GEM_DIR)/hev2.gem
	cd / && env -u HEV2_LIBRARY GEM_HOME=$(abspath $(RUBY_GEM_DIR))/home GEM_PATH=$(abspath $(RUBY_GEM_DIR))/home \
		/usr/bin/ruby $(abspath $(RUBY_DIR))/test/gem_smoke.rb
	@echo "gem-ruby: $(RUBY_GEM_DIR)/hev2.gem built, installed and used"

# Hev2.tcp vs Socket.tcp in the same process; again with $(RUBY) when it
# names another Ruby.
bench-ruby: capi-lib
	$(RUBY_ENV) /usr/bin/ruby -I$(RUBY_DIR)/lib -I$(RUBY_DIR)/test $(RUBY_DIR)/bench/bench.rb
	@if [ "$(RUBY)" != ruby ] && [ "$$(command -v $(RUBY))" != /usr/bin/ruby ]; then \
		echo "== bench-ruby with $(RUBY)"; \
		$(RUBY_ENV) $(RUBY) -I$(RUBY_DIR)/lib -I$(RUBY_DIR)/test $(RUBY_DIR)/bench/bench.rb; fi
