# ruby: the hev2 gem (bindings/ruby) over libhev2.so, its tests and bench, on
# each Ruby of a matrix. The gems themselves are built and installed by
# mk/dist-ruby.mk (make dist-ruby, test-dist-ruby).
#
# RUBIES lists the ruby executables to test with: Debian's Ruby (3.1) and the
# Ruby 3.4 that scripts/build-ruby.sh builds once from Debian's ruby3.4 source
# package into $(HEV2_CACHE) (reused afterwards). `make test RUBIES=/usr/bin/ruby`
# runs on a subset. Each Ruby's own `gem` command builds and installs the gem.
HEV2_CACHE    ?= /var/cache/hev2
export HEV2_CACHE
RUBY_BUILD_SCRIPT := scripts/build-ruby.sh
RUBY34        := $(shell HEV2_CACHE=$(HEV2_CACHE) $(RUBY_BUILD_SCRIPT) --print)
RUBIES        ?= /usr/bin/ruby $(RUBY34)
RUBY_DIR      := bindings/ruby
RUBY_LIB      := $(abspath $(BUILD)/libhev2.so)
RUBY_ENV      := HEV2_LIBRARY=$(RUBY_LIB) HEV2_TESTDNS=$(abspath $(BUILD)/hev2-testdns)

TEST_TARGETS  += test-ruby
BENCH_TARGETS += bench-ruby
# Debian's Ruby and what the tests use; the 3.4 build installs its own
# build dependencies (scripts/build-ruby.sh).
DEB_PACKAGES  += ruby ruby-dev ruby-minitest ruby-async gcc libc6-dev iproute2
# The HTTP clients test-ruby-clients proves hev2/replace with.
DEB_PACKAGES  += ruby-faraday ruby-net-http-persistent

# The Ruby of the hev2-ruby column of `make scenarios`.
SCENARIO_RUBY ?= /usr/bin/ruby
# The scenario client is test code (test/client), not part of the gem.
RUBY_CLIENT_CMD := $(abspath $(RUBY_DIR)/test/client/hev2-client)
RUBY_CLIENT   := $(SCENARIO_RUBY) $(RUBY_CLIENT_CMD)
# A column of `make scenarios` (the client finds build/libhev2.so itself).
SCENARIO_CLIENTS += --client "hev2-ruby=$(RUBY_CLIENT)"

# Runs the recipe's loop body once per Ruby of $(RUBIES), $$r being its path;
# stops at the first failure, naming the Ruby.
RUBY_EACH = set -e; for r in $(RUBIES); do \
	v=$$("$$r" -e 'print RUBY_VERSION') || { echo "$@: $$r does not run" >&2; exit 1; }; \
	echo "== $@ on Ruby $$v ($$r)";

.PHONY: test-ruby test-ruby-unit test-ruby-scenarios test-ruby-differential test-ruby-fibers test-ruby-clients bench-ruby bench-ruby-fresh bench-ruby-fibers rubies ruby-ext

# The gem's C extension (Hev2::NoGVL, ext/hev2_wait), built by each Ruby of
# $(RUBIES) into $(RUBY_EXT_DIR)/<version>/hev2/hev2_wait.so, with -Werror.
# The targets below put that directory on the load path (-I, RUBYLIB) and
# set HEV2_EXPECT_EXT=1: the tests then fail if the extension is not used.
RUBY_EXT_DIR  := $(abspath $(BUILD))/ruby-ext
ruby-ext: rubies ## the gem's C extension (hev2_wait.so) for each Ruby of RUBIES, -Werror
	@$(RUBY_EACH) \
		d=$(RUBY_EXT_DIR)/$$v; mkdir -p "$$d/hev2"; \
		(cd "$$d" && HEV2_WERROR=1 "$$r" $(abspath $(RUBY_DIR))/ext/hev2_wait/extconf.rb >/dev/null && \
			env -u MAKEFLAGS -u MFLAGS -u MAKEOVERRIDES make -s >/dev/null && cp hev2_wait.so hev2/); \
	done

test-ruby: test-ruby-unit test-ruby-scenarios test-ruby-differential test-ruby-fibers test-ruby-clients ## the unit tests, scenario suite, differential test, Fiber scheduler test and HTTP clients on each Ruby of RUBIES (the gems: test-dist-ruby)

# Builds the Rubies of $(RUBIES) that scripts/build-ruby.sh provides (once;
# a cached build is only checked). Other entries must exist already.
rubies: ## build the Rubies of RUBIES that scripts/build-ruby.sh provides (once, cached)
	@set -e; for r in $(RUBIES); do \
		if [ "$$r" = "$(RUBY34)" ]; then $(RUBY_BUILD_SCRIPT) >/dev/null; \
		elif ! [ -x "$$r" ] && ! command -v "$$r" >/dev/null; then echo "rubies: no Ruby $$r" >&2; exit 1; fi; \
	done

# The gem's minitest suite, with warnings on, against the freshly built
# library; test_intents.rb's DNS server is hev2-testdns (mk/testdns.mk).
# Twice on each Ruby: with the C extension, and without it (HEV2_NO_EXT=1,
# as a gem installed without a compiler runs: the race on a library
# thread; the extension's own tests skip).
test-ruby-unit: capi-lib testdns rubies ruby-ext ## the gem's minitest suite (warnings on) on each Ruby of RUBIES, with and without its C extension
	@$(RUBY_EACH) \
		$(RUBY_ENV) HEV2_EXPECT_EXT=1 "$$r" -w -I$(RUBY_DIR)/lib -I$(RUBY_DIR)/test -I$(RUBY_EXT_DIR)/$$v $(RUBY_DIR)/test/run.rb; \
		echo "== without the C extension"; \
		$(RUBY_ENV) HEV2_NO_EXT=1 "$$r" -w -I$(RUBY_DIR)/lib -I$(RUBY_DIR)/test $(RUBY_DIR)/test/run.rb; \
	done

# The shared scenario suite through the gem's client command (root only).
test-ruby-scenarios: capi-lib testbed-tools rubies ruby-ext ## the scenario suite through the Ruby client on each Ruby of RUBIES (root)
	@if [ "$$(id -u)" != 0 ]; then echo "SKIP: test-ruby-scenarios needs root (network namespaces)"; exit 0; fi; \
	$(RUBY_EACH) \
		$(RUBY_ENV) RUBYLIB=$(RUBY_EXT_DIR)/$$v $(BUILD)/hev2-testbed suite --require https-rr,ech --trace-files $(BUILD)/traces/ruby-$$v --client "$$r $(RUBY_CLIENT_CMD)"; \
		$(RUBY_ENV) RUBYLIB=$(RUBY_EXT_DIR)/$$v $(BUILD)/hev2-testbed suite --require https-rr,ech --client "$$r $(RUBY_CLIENT_CMD) --resolver builtin"; \
	done

# The differential test (bindings/ruby/test/differential): the same inputs
# through Socket.tcp and Hev2.tcp, TCPSocket.new with and without
# hev2/replace, in the test bed's client namespace (names through the bed's
# DNS server, literals on loopback); prints the table, fails on any
# difference that is not documented (root only).
test-ruby-differential: capi-lib testbed-tools rubies ruby-ext ## Socket.tcp/TCPSocket.new vs Hev2.tcp/hev2/replace on the test bed, a table per Ruby of RUBIES (root)
	@if [ "$$(id -u)" != 0 ]; then echo "SKIP: test-ruby-differential needs root (network namespaces)"; exit 0; fi; \
	$(RUBY_EACH) \
		$(RUBY_ENV) HEV2_EXPECT_EXT=1 "$$r" $(RUBY_DIR)/test/differential/run.rb $(abspath $(BUILD))/hev2-testbed -I$(RUBY_EXT_DIR)/$$v; \
	done

# Hev2.tcp under a real Fiber scheduler: Debian's ruby-async on Ruby 3.1,
# the Ruby source tree's test/fiber/scheduler.rb on the Ruby 3.4 we build.
test-ruby-fibers: capi-lib rubies ruby-ext ## many Hev2.tcp in one thread under a real Fiber scheduler (async / Ruby's own) on each Ruby of RUBIES
	@$(RUBY_EACH) \
		$(RUBY_ENV) "$$r" -w -I$(RUBY_DIR)/lib -I$(RUBY_EXT_DIR)/$$v $(RUBY_DIR)/test/fibers/fibers.rb; \
	done

# Net::HTTP, Faraday (Net::HTTP adapter) and net-http-persistent, Debian's
# packages, through hev2/replace, HTTP and HTTPS, on the bed's v6-blackhole
# and aaaa-never rows, judged as the suite judges a connect; each with
# Hev2::Replace.defaults' https_rr on and off on the bed's HTTPS-record
# redirect (on: the page from the record's port, the origin's name as SNI;
# off: refused); the same
# clients without hev2 printed beside them (bindings/ruby/test/http_clients,
# run by `hev2-testbed run`, which serves the rows and a web server). A Ruby
# other than Debian's finds Debian's gems through GEM_PATH and
# net-http-persistent (installed outside any gem directory) through a
# directory of links to it.
RUBY_DEBIAN_GEMS := /usr/share/rubygems-integration/all
RUBY_DEBIAN_LIB  := $(abspath $(BUILD))/ruby-debian-lib
test-ruby-clients: capi-lib testbed-tools rubies ruby-ext ## Net::HTTP, Faraday, net-http-persistent through hev2/replace on the test bed (HTTP, HTTPS) on each Ruby of RUBIES (root)
	@if [ "$$(id -u)" != 0 ]; then echo "SKIP: test-ruby-clients needs root (network namespaces)"; exit 0; fi; \
	mkdir -p $(RUBY_DEBIAN_LIB)/net/http; \
	ln -sf /usr/lib/ruby/vendor_ruby/net/http/persistent.rb $(RUBY_DEBIAN_LIB)/net/http/persistent.rb; \
	ln -sfn /usr/lib/ruby/vendor_ruby/net/http/persistent $(RUBY_DEBIAN_LIB)/net/http/persistent; \
	$(RUBY_EACH) \
		gems=; [ "$$r" = /usr/bin/ruby ] || gems="GEM_PATH=$(RUBY_DEBIAN_GEMS)"; \
		env $$gems $(RUBY_ENV) RUBYLIB=$(abspath $(RUBY_DIR))/lib:$(RUBY_EXT_DIR)/$$v:$(RUBY_DEBIAN_LIB) \
			timeout 300 $(BUILD)/hev2-testbed run -- "$$r" $(abspath $(RUBY_DIR))/test/http_clients/run.rb; \
	done

# Hev2.tcp vs Socket.tcp in the same process, on each Ruby of $(RUBIES).
bench-ruby: capi-lib rubies ruby-ext ## Hev2.tcp vs Socket.tcp / TCPSocket.new, interleaved, on each Ruby of RUBIES; then bench-ruby-fresh and bench-ruby-fibers
	@$(RUBY_EACH) \
		$(FRESH_NETNS) env $(RUBY_ENV) "$$r" -I$(RUBY_DIR)/lib -I$(RUBY_DIR)/test -I$(RUBY_EXT_DIR)/$$v $(RUBY_DIR)/bench/bench.rb; \
	done
	@$(MAKE) --no-print-directory bench-ruby-fresh bench-ruby-fibers

# A script that requires hev2 and connects once beside the same with
# Socket.tcp, as whole fresh processes (BENCH_PAIRS pairs, 30 by default):
# wall time, where it goes, memory. The children find the gem and its C
# extension through RUBYLIB.
bench-ruby-fresh: capi-lib rubies ruby-ext ## fresh processes: require "hev2" + Hev2.tcp vs Socket.tcp (goal <= 15 ms), where the time goes, RSS, on each Ruby of RUBIES
	@$(RUBY_EACH) \
		$(FRESH_NETNS) env $(RUBY_ENV) RUBYLIB=$(abspath $(RUBY_DIR))/lib:$(RUBY_EXT_DIR)/$$v "$$r" $(RUBY_DIR)/bench/fresh_process.rb; \
	done

# Hev2.tcp vs Socket.tcp under the same Fiber scheduler (the tests'
# TinyScheduler), interleaved in one fiber.
bench-ruby-fibers: capi-lib rubies ruby-ext ## Hev2.tcp vs Socket.tcp under one Fiber scheduler, interleaved (goal <= 1.1x), on each Ruby of RUBIES
	@$(RUBY_EACH) \
		$(FRESH_NETNS) env $(RUBY_ENV) "$$r" -I$(RUBY_DIR)/lib -I$(RUBY_EXT_DIR)/$$v $(RUBY_DIR)/bench/fiber.rb; \
	done
