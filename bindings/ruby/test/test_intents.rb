# frozen_string_literal: true

require "minitest/autorun"
require "rbconfig"
require_relative "netns"

# Runs the files of test/in_netns/, each in its own Ruby process, inside a
# network namespace of their own (root only).
class TestIntentsInNamespace < Minitest::Test
  def run_in_namespace(file)
    skip "needs root and ip(8) for a network namespace" unless TestNetns.usable?

    ns = TestNetns.new
    begin
      lib = File.expand_path("../lib", __dir__)
      argv = ns.command(RbConfig.ruby, "-w", "-I#{lib}", "-I#{__dir__}", File.join(__dir__, "in_netns", file))
      out = IO.popen(argv, err: %i[child out], &:read)
      assert $?.success?, "#{file} inside #{ns.name} failed:\n#{out}"
      assert_match(/\d+ runs, \d+ assertions, 0 failures, 0 errors, 0 skips/, out)
    ensure
      ns.close
    end
  end

  def test_ruby_hev2_intents
    run_in_namespace("intents.rb")
  end

  def test_a_real_eai_system
    run_in_namespace("eai_system.rb")
  end
end
