# frozen_string_literal: true

module Hev2
  # The gem's version: include/hev2.h's HEV2_VERSION_MAJOR.MINOR.PATCH (make lint-versions).
  VERSION = "1.5.0"
end
