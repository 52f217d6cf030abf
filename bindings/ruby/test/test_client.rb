# frozen_string_literal: true

require "json"
require "rbconfig"
require_relative "helper"

# test/client/hev2-client follows the shared scenario-client contract.
class TestClient < Minitest::Test
  include Helper
  CLIENT = File.expand_path("client/hev2-client", __dir__)

  def client(*args)
    out = IO.popen([RbConfig.ruby, CLIENT, *args.map(&:to_s)], err: File::NULL, &:read)
    [$?.exitstatus, out]
  end

  def test_success_prints_one_json_line
    closing(Loopback.listener("::1")) do |srv|
      status, out = client("::1", Loopback.port_of(srv))
      assert_equal 0, status
      assert_equal 1, out.lines.size
      r = JSON.parse(out)
      assert_equal true, r["ok"]
      assert_equal "::1", r["address"]
      assert_equal "ipv6", r["family"]
      assert_equal Loopback.port_of(srv), r["port"]
      assert_kind_of Float, r["elapsed_ms"]
      assert_includes r["events"].map { |e| e["kind"] }, "attempt-won"
    end
  end

  def test_failure_exits_1_with_the_cause
    closing(Loopback.refusing("127.0.0.1")) do |r|
      status, out = client("127.0.0.1", Loopback.port_of(r))
      assert_equal 1, status
      j = JSON.parse(out)
      assert_equal false, j["ok"]
      assert_equal "ECONNREFUSED", j["error"]["errno"]
      assert_equal "", j["error"]["eai"]
    end
  end

  def test_timeout_is_named
    srv, filler = Loopback.syn_dropping("127.0.0.1")
    status, out = client("--connect-timeout", 100, "127.0.0.1", Loopback.port_of(srv))
    assert_equal 1, status
    j = JSON.parse(out)
    assert_equal "connect_timeout", j["error"]["timeout"]
    assert_equal "ETIMEDOUT", j["error"]["errno"]
  ensure
    filler&.close
    srv&.close
  end

  def test_usage_errors_exit_2
    assert_equal 2, client("127.0.0.1").first
    assert_equal 2, client("--family", "5", "h", 80).first
    assert_equal 2, client("--resolver", "dns", "h", 80).first
    assert_equal 2, client("--connect-timeout", "-1", "h", 80).first
    assert_equal 2, client("--bogus", "h", 80).first
    assert_equal 2, client("h", "99999").first
  end
end
