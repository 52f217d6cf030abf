# frozen_string_literal: true

# Runs every test of examples/ruby-ext (make test-extension-ruby):
#   ruby -I <dir of hev2_ext.so> examples/ruby-ext/test/run.rb
Dir.glob(File.join(__dir__, "test_*.rb")).sort.each { |f| require f }
