# frozen_string_literal: true

# Runs every test file of the gem (make test-ruby-unit).
require "minitest/autorun"
Dir[File.join(__dir__, "test_*.rb")].sort.each { |f| require f }
