# frozen_string_literal: true

require "minitest/autorun"
require "rbconfig"
require "hev2"

# Runs test/in_process/replace.rb in a Ruby process of its own.
class TestReplaceInItsOwnProcess < Minitest::Test
  def test_loading_hev2_replaces_nothing
    assert_equal Socket.singleton_class, Socket.method(:tcp).owner
    assert_equal TCPSocket.singleton_class.ancestors.first, TCPSocket.singleton_class
    refute defined?(Hev2::Replace)
  end

  def test_replace
    lib = File.expand_path("../lib", __dir__)
    out = IO.popen([RbConfig.ruby, "-w", "-I#{lib}", "-I#{__dir__}",
                    File.join(__dir__, "in_process", "replace.rb")], err: %i[child out], &:read)
    assert $?.success?, out
    assert_match(/\d+ runs, \d+ assertions, 0 failures, 0 errors, 0 skips/, out)
  end
end
