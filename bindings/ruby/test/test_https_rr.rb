# frozen_string_literal: true

require "base64"
require "json"
require "rbconfig"
require_relative "helper"
require_relative "testdns"

# HTTPS records (Happy Eyeballs v3): Hev2.tcp(..., https_rr: true, alpn:
# [...], ech: true, ech_wait: ...), Hev2.service_of, and the scenario
# client's --https-rr/--alpn/--ech and "svcb". Every name is answered by
# hev2-testdns on loopback through the built-in resolver (nameservers:):
# nothing is asked of the machine's own resolver. A connect to a port
# other than 443 asks "_PORT._https.HOST"; a record whose target is "." is
# HOST's own addresses, on the record's port: the connection is
# redirected from a refusing port to a listener.
class TestHTTPSRR < Minitest::Test
  include Helper

  ECH = (0..255).map(&:chr).join.b * 2 + "ech config list".b # read in the scratch's buffer
  BIG_ECH = (0..255).map(&:chr).join.b * 6 # 1536 bytes: read again into a buffer of its size
  CLIENT = File.expand_path("client/hev2-client", __dir__)

  def setup
    @listener = Loopback.listener("127.0.0.1")
    @refusing = Loopback.refusing("127.0.0.1")
    @lport = Loopback.port_of(@listener)
    @rport = Loopback.port_of(@refusing)
    rr = "_#{@rport}._https"
    @dns = TestDNSServer.new("127.0.0.1", 0)
    @dns.zone(
      "svc.test" => { "A" => ["127.0.0.1"] },
      "#{rr}.svc.test" => { "HTTPS" => { "records" => [{ "priority" => 1, "target" => ".", "port" => @lport,
                                                         "alpn" => ["h2"] }] } },
      "ech.test" => { "A" => ["127.0.0.1"] },
      "#{rr}.ech.test" => { "HTTPS" => [{ "priority" => 3, "port" => @lport, "alpn" => ["h2"],
                                          "ech" => Base64.strict_encode64(ECH) }] },
      "bigech.test" => { "A" => ["127.0.0.1"] },
      "#{rr}.bigech.test" => { "HTTPS" => [{ "priority" => 1, "port" => @lport,
                                             "ech" => Base64.strict_encode64(BIG_ECH) }] },
      # No records: NODATA; the origin's port refuses.
      "plain.test" => { "A" => ["127.0.0.1"] },
      "#{rr}.plain.test" => { "HTTPS" => [] },
      # Only an h3 service: skipped unless alpn names h3.
      "h3.test" => { "A" => ["127.0.0.1"] },
      "#{rr}.h3.test" => { "HTTPS" => [{ "priority" => 1, "port" => @lport, "alpn" => ["h3"], "no-default-alpn" => true }] },
    )
    @ns = { resolver: :builtin, nameservers: [@dns.address] }
  end

  def teardown
    @dns&.close
    [@listener, @refusing].each { |s| s&.close }
  end

  def https_queries
    @dns.query_log.select { |_, type| type == "HTTPS" }.map(&:first).uniq # a retransmission is no second query
  end

  # ---- options ---------------------------------------------------------

  def test_alpn_checked_by_ruby
    {
      "h2" => [TypeError, /Array of Strings/],
      :h2 => [TypeError, /Array of Strings/],
      7 => [TypeError, /Array of Strings/],
      [:h2] => [TypeError, /entry :h2 is not a String/],
      ["h2", nil] => [TypeError, /entry nil is not a String/],
      [] => [ArgumentError, /alpn is empty/],
      [""] => [ArgumentError, /empty protocol name/],
      ["h2,http/1.1"] => [ArgumentError, /comma or a NUL/],
      ["h2\0"] => [ArgumentError, /comma or a NUL/],
    }.each do |alpn, (exc, words)|
      e = assert_raises(exc, alpn.inspect) { Hev2.tcp("127.0.0.1", @rport, https_rr: true, alpn: alpn) }
      assert_match words, e.message
    end
  end

  def test_alpn_limits_are_the_librarys
    e = assert_raises(ArgumentError) { Hev2.tcp("127.0.0.1", @rport, https_rr: true, alpn: (1..17).map { |i| "p#{i}" }) }
    assert_match(/invalid alpn: 17 protocols, at most 16/, e.message)
    e = assert_raises(ArgumentError) { Hev2.tcp("127.0.0.1", @rport, https_rr: true, alpn: ["x" * 256]) }
    assert_match(/is not a protocol name \(1-255 bytes/, e.message)
    Hev2.tcp("127.0.0.1", @lport, https_rr: true, alpn: ["x" * 255] * 15 + ["h2"]).close
    Hev2.tcp("127.0.0.1", @lport, alpn: ["h2"]).close # without https_rr: taken, unused
  end

  def test_flags_and_ech_wait_checked
    assert_raises(TypeError) { Hev2.tcp("127.0.0.1", @rport, https_rr: 1) }
    assert_raises(TypeError) { Hev2.tcp("127.0.0.1", @rport, https_rr: "yes") }
    assert_raises(TypeError) { Hev2.tcp("127.0.0.1", @rport, ech: nil) }
    assert_raises(TypeError) { Hev2.tcp("127.0.0.1", @rport, ech_wait: "5") }
    assert_raises(ArgumentError) { Hev2.tcp("127.0.0.1", @rport, ech_wait: -1) } # the library's range
  end

  # ---- defaults --------------------------------------------------------

  def test_no_https_query_without_https_rr
    Hev2.tcp("svc.test", @lport, **@ns) { |s| assert_nil Hev2.service_of(s) }
    log = @dns.query_log
    assert_includes log, ["svc.test", "A"]
    assert_empty log.select { |_, type| type == "HTTPS" }
  end

  def test_service_of_other_sockets_is_nil
    Socket.tcp("127.0.0.1", @lport) { |s| assert_nil Hev2.service_of(s) }
  end

  def test_no_https_query_for_an_ip_literal_or_addresses
    Hev2.tcp("127.0.0.1", @lport, https_rr: true, **@ns) { |s| assert_nil Hev2.service_of(s) }
    Hev2.tcp("svc.test", @lport, https_rr: true, addresses: ["127.0.0.1"], **@ns) { |s| assert_nil Hev2.service_of(s) }
    assert_empty https_queries
  end

  # ---- a real connect --------------------------------------------------

  def test_redirected_to_the_services_port
    Hev2.tcp("svc.test", @rport, https_rr: true, **@ns) do |s|
      assert_equal ["127.0.0.1", @lport], [s.remote_address.ip_address, s.remote_address.ip_port]
      out = Hev2.service_of(s)
      assert_equal({ state: "answered", services: 1,
                     service: { priority: 1, target: "svc.test.", port: @lport, alpn: %w[h2 http/1.1], ech: nil } }, out)
      assert out.frozen? && out[:service].frozen?
    end
    assert_equal ["_#{@rport}._https.svc.test"], https_queries
  end

  def test_the_ech_configuration_comes_back
    [false, true].each do |ech|
      Hev2.tcp("ech.test", @rport, https_rr: true, ech: ech, ech_wait: 2, **@ns) do |s|
        assert_equal @lport, s.remote_address.ip_port
        svc = Hev2.service_of(s)[:service]
        assert_equal ECH, svc[:ech]
        assert_equal Encoding::BINARY, svc[:ech].encoding
        assert_equal [3, "ech.test."], [svc[:priority], svc[:target]]
      end
    end
    Hev2.tcp("bigech.test", @rport, https_rr: true, **@ns) do |s|
      assert_equal BIG_ECH, Hev2.service_of(s)[:service][:ech]
    end
  end

  def test_alpn_decides_which_services_are_used
    e = assert_raises(Errno::ECONNREFUSED) { Hev2.tcp("h3.test", @rport, https_rr: true, **@ns) }
    assert_equal({ state: "answered", services: 0, service: nil }, e.hev2_service)
    Hev2.tcp("h3.test", @rport, https_rr: true, alpn: ["h3"], **@ns) do |s|
      assert_equal @lport, s.remote_address.ip_port
      assert_equal ["h3"], Hev2.service_of(s)[:service][:alpn]
    end
  end

  def test_the_origin_wins_without_a_service
    Hev2.tcp("svc.test", @lport, https_rr: true, **@ns) do |s|
      assert_equal({ state: "nxdomain", services: 0, service: nil }, Hev2.service_of(s))
    end
    @dns.zone("_#{@lport}._https.plain.test" => { "HTTPS" => [] })
    Hev2.tcp("plain.test", @lport, https_rr: true, **@ns) do |s|
      assert_equal({ state: "nodata", services: 0, service: nil }, Hev2.service_of(s))
    end
  end

  def test_with_the_report_and_the_library_driving
    drive = Hev2::Connector.drive
    %i[library waiter].each do |who|
      next if who == :waiter && !Hev2::NoGVL.available?

      Hev2::Connector.drive = who
      Hev2.tcp("svc.test", @rport, https_rr: true, report: true, **@ns) do |s|
        assert_equal @lport, Hev2.service_of(s)[:service][:port]
        report = Hev2.report_of(s)
        assert_equal @lport, report[:attempts][report[:winner]][:port]
      end
    end
  ensure
    Hev2::Connector.drive = drive
  end

  # ---- the scenario client ---------------------------------------------

  def client(*args)
    out = IO.popen([RbConfig.ruby, CLIENT, *args.map(&:to_s)], err: %i[child out], &:read)
    [$?.exitstatus, out]
  end

  def test_client_svcb
    ns = ["--resolver", "builtin", "--nameserver", @dns.address]
    status, out = client(*ns, "svc.test", @lport)
    assert_equal 0, status, out
    assert_nil JSON.parse(out).fetch("svcb")
    status, out = client(*ns, "--https-rr", "svc.test", @rport)
    assert_equal 0, status, out
    j = JSON.parse(out)
    assert_equal @lport, j["port"]
    assert_equal({ "state" => "answered", "service" => { "priority" => 1, "target" => "svc.test.", "port" => @lport,
                                                         "alpn" => %w[h2 http/1.1], "ech" => false } }, j["svcb"])
    status, out = client(*ns, "--https-rr", "--ech", "--alpn", "h2", "ech.test", @rport)
    assert_equal 0, status, out
    assert_equal true, JSON.parse(out)["svcb"]["service"]["ech"]
    status, out = client(*ns, "--https-rr", "--alpn", "h3", "h3.test", @rport)
    assert_equal 0, status, out
    assert_equal ["h3"], JSON.parse(out)["svcb"]["service"]["alpn"]
    status, out = client(*ns, "--https-rr", "plain.test", @rport)
    assert_equal 1, status, out
    assert_equal({ "state" => "nodata", "service" => nil }, JSON.parse(out)["svcb"])
  end

  def test_client_alpn_usage_errors
    ["", "h2,,h3", "h2,"].each do |alpn|
      status, out = client("--https-rr", "--alpn", alpn, "127.0.0.1", @rport)
      assert_equal 2, status, out
      assert_match(/\Ahev2-client: /, out)
    end
  end
end
