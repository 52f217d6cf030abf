# extension-ruby: examples/ruby-ext, a Ruby C extension (Hev2Ext) that
# links libhev2 found by pkg-config alone and delivers each connect through
# Ruby's postponed jobs; built, tested and benchmarked on each Ruby of
# $(RUBIES) (mk/ruby.mk).
#
# The build sees the tree only through PKG_CONFIG_PATH=$(BUILD), where
# hev2-uninstalled.pc (mk/capi.mk) names this tree's include/ and build/:
# the same extconf.rb builds against an installed libhev2-dev unchanged.
RUBY_EXT_EXAMPLE     := examples/ruby-ext
RUBY_EXT_EXAMPLE_DIR := $(abspath $(BUILD))/extension-ruby
RUBY_EXT_PKG_ENV     := PKG_CONFIG_PATH=$(abspath $(BUILD))

EXTENSION_TEST_TARGETS  += test-extension-ruby
EXTENSION_BENCH_TARGETS += bench-extension-ruby
DEB_PACKAGES   += pkg-config ruby ruby-dev ruby-minitest ruby-async gcc libc6-dev
LINT_RUBY_DIRS += $(RUBY_EXT_EXAMPLE)

.PHONY: extension-ruby test-extension-ruby bench-extension-ruby

# extconf.rb and make in $(RUBY_EXT_EXAMPLE_DIR)/<version>, from a fresh
# directory each time (nothing of an earlier configuration is reused),
# with -Werror.
extension-ruby: capi-lib $(BUILD)/hev2-uninstalled.pc rubies ## examples/ruby-ext's Hev2Ext for each Ruby of RUBIES, found libhev2 by pkg-config alone
	@$(RUBY_EACH) \
		d=$(RUBY_EXT_EXAMPLE_DIR)/$$v; rm -rf "$$d"; mkdir -p "$$d"; \
		(cd "$$d" && $(RUBY_EXT_PKG_ENV) HEV2_WERROR=1 "$$r" $(abspath $(RUBY_EXT_EXAMPLE))/ext/hev2_ext/extconf.rb >extconf.out && \
			env -u MAKEFLAGS -u MFLAGS -u MAKEOVERRIDES make -s V=0 >/dev/null) || { cat "$$d/extconf.out"; exit 1; }; \
		echo "extension-ruby: $$d/hev2_ext.so"; \
	done

# Per Ruby: extconf.rb where pkg-config is missing (an empty PATH), and
# where pkg-config finds no hev2 (an empty search path), each fails with its
# one line; then the minitest suite (warnings on) against the extension
# built above.
RUBY_EXT_EXTCONF := $(abspath $(RUBY_EXT_EXAMPLE))/ext/hev2_ext/extconf.rb
test-extension-ruby: extension-ruby ## build Hev2Ext from pkg-config alone and run its minitest suite on each Ruby of RUBIES
	@$(RUBY_EACH) \
		d=$(RUBY_EXT_EXAMPLE_DIR)/$$v-missing; rm -rf "$$d"; mkdir -p "$$d/empty"; \
		for case in "PATH=$$d/empty|pkg-config is not installed" "PKG_CONFIG_PATH= PKG_CONFIG_LIBDIR=$$d/empty|pkg-config knows no hev2"; do \
			set -- $${case%%|*}; want="hev2_ext: $${case#*|}"; \
			if (cd "$$d" && env "$$@" "$$r" $(RUBY_EXT_EXTCONF) >out 2>err); then echo "extconf.rb succeeded with $$*"; exit 1; fi; \
			if [ "$$(wc -l <"$$d/err")" != 1 ] || ! grep -q "^$$want" "$$d/err"; then \
				echo "extconf.rb with $$* did not say \"$$want\" in one line:"; cat "$$d/err"; exit 1; fi; \
			echo "extconf.rb with $$*: $$(cat "$$d/err")"; \
		done; \
		"$$r" -w -I$(RUBY_EXT_EXAMPLE_DIR)/$$v $(RUBY_EXT_EXAMPLE)/test/run.rb; \
	done

# Not for figures on a loaded machine (docs/benchmarks.md).
bench-extension-ruby: extension-ruby ## completion latency: Hev2Ext's postponed job vs the gem's handle path, on each Ruby of RUBIES
	@$(RUBY_EACH) \
		$(FRESH_NETNS) env $(RUBY_ENV) "$$r" -I$(RUBY_EXT_EXAMPLE_DIR)/$$v -I$(RUBY_DIR)/lib $(RUBY_EXT_EXAMPLE)/bench/bench.rb; \
	done
