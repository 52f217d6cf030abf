# frozen_string_literal: true

require "minitest/autorun"
require "rbconfig"

# The examples in examples/ruby run (on loopback, with no arguments).
class TestExamples < Minitest::Test
  DIR = File.expand_path("../../../examples/ruby", __dir__)
  LIB = File.expand_path("../lib", __dir__)

  def run_example(name)
    out = IO.popen([RbConfig.ruby, "-w", "-I#{LIB}", File.join(DIR, name)], err: %i[child out], &:read)
    assert $?.success?, "#{name} failed:\n#{out}"
    out
  end

  def test_connect_prints_the_timeline
    out = run_example("connect.rb")
    assert_match(/attempt-started\s+127\.0\.0\.1/, out)
    assert_match(/connected to 127\.0\.0\.1 port \d+ \(IPv4\)/, out)
  end

  def test_net_http_goes_through_hev2_after_replace
    out = run_example("net_http_replace.rb")
    assert_includes out, "200 OK: hello through hev2"
    assert_includes out, "connections made by hev2: 1"
  end
end
