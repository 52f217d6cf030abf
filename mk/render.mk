# render: the race as a picture, checked in a real browser. The waterfall
# SVGs of the scripted races (tests/racescript: the fallback, the
# Resolution Delay, 8 attempts with the longest labels, failures, timeouts,
# a cancel) are opened in Debian's chromium, headless, driven by npm's
# playwright-core (one browser launch for all): each must load without an
# error or a request, have the lanes its trace says (winner, losers,
# timers), and no two labels may overlap or leave the picture; each is
# saved as a PNG beside its SVG in $(RENDER_DIR)/samples. The machine's
# Node.js and npm install playwright-core into the build directory.
TEST_TARGETS += test-render
DEB_PACKAGES += chromium

RENDER_DIR               := $(BUILD)/render
PLAYWRIGHT_CORE_VERSION  := 1.65.1
RENDER_PLAYWRIGHT        := $(RENDER_DIR)/node_modules/playwright-core/package.json
RENDER_CHROMIUM          ?= /usr/lib/chromium/chromium

.PHONY: test-render
$(RENDER_PLAYWRIGHT):
	@mkdir -p $(RENDER_DIR)
	npm install --no-audit --no-fund --silent --prefix $(RENDER_DIR) playwright-core@$(PLAYWRIGHT_CORE_VERSION)

test-render: $(RENDER_PLAYWRIGHT) ## the scripted races' SVGs in headless chromium: loads clean, expected lanes, no label overlaps, PNGs in build/render/samples
	@if ! [ -x "$(RENDER_CHROMIUM)" ]; then echo "test-render: no chromium at $(RENDER_CHROMIUM) (make deps installs Debian's)" >&2; exit 1; fi
	$(GO) run ./tests/racescript/samples $(RENDER_DIR)/samples
	CHROMIUM=$(RENDER_CHROMIUM) NODE_PATH=$(abspath $(RENDER_DIR))/node_modules node tests/render/check_svg.js $(RENDER_DIR)/samples
