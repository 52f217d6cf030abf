# frozen_string_literal: true

require "minitest/autorun"
require "rbconfig"
require_relative "netns"

# Runs test/in_netns/intents.rb inside a namespace of its own (root only).
class TestIntentsInNamespace < Minitest::Test
  def test_ruby_hev2_intents_inside_a_namespace
    skip "needs root and ip(8) for a network namespace" unless TestNetns.usable?

    ns = TestNetns.new
    begin
      lib = File.expand_path("../lib", __dir__)
      argv = ns.command(RbConfig.ruby, "-w", "-I#{lib}", "-I#{__dir__}",
                        File.join(__dir__, "in_netns", "intents.rb"))
      out = IO.popen(argv, err: %i[child out], &:read)
      assert $?.success?, "intents inside #{ns.name} failed:\n#{out}"
      assert_match(/\d+ runs, \d+ assertions, 0 failures, 0 errors, 0 skips/, out)
      $stdout.puts out.lines.last(1).join if ENV["VERBOSE"]
    ensure
      ns.close
    end
  end
end
