# frozen_string_literal: true

module Hev2
  # The gem's own version.
  VERSION = "0.1.0"
end
