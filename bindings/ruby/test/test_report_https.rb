# frozen_string_literal: true

require_relative "helper"
require_relative "testdns"

# The report's HTTPS part (report[:https], each attempt's :service and
# :origin) of races with https_rr against hev2-testdns on loopback (the
# built-in resolver: nothing is asked of the machine's own resolver).
class TestReportHTTPS < Minitest::Test
  include Helper

  def setup
    @listener = Loopback.listener("127.0.0.1")
    @refusing = Loopback.refusing("127.0.0.1")
    @lport = Loopback.port_of(@listener)
    @rport = Loopback.port_of(@refusing)
    rr = "_#{@rport}._https"
    @dns = TestDNSServer.new("127.0.0.1", 0)
    @dns.zone(
      "svc.test" => { "A" => ["127.0.0.1"] },
      "#{rr}.svc.test" => { "HTTPS" => { "records" => [
        { "priority" => 1, "target" => ".", "port" => @lport, "alpn" => ["h2"] },
        { "priority" => 2, "target" => ".", "alpn" => ["h3"], "no-default-alpn" => true },
      ] } },
      "alias.test" => { "A" => ["127.0.0.1"] },
      "#{rr}.alias.test" => { "HTTPS" => { "records" => [{ "priority" => 0, "target" => "cdn.test" }] } },
      "cdn.test" => { "HTTPS" => { "records" => [{ "priority" => 1, "target" => "target.test", "port" => @lport,
                                                   "ipv4hint" => ["127.0.0.9"] }] } },
      "target.test" => { "A" => ["127.0.0.1"] },
      "plain.test" => { "A" => ["127.0.0.1"] },
      "#{rr}.plain.test" => { "HTTPS" => [] },
    )
    @ns = { resolver: :builtin, nameservers: [@dns.address], family: :ipv4 }
  end

  def teardown
    @dns&.close
    [@listener, @refusing].each { |s| s&.close }
  end

  def report(host, port, **more)
    Hev2.tcp(host, port, report: true, **@ns, **more) { |s| Hev2.report_of(s) }
  end

  def test_services_and_skipped_records
    rep = report("svc.test", @rport, https_rr: true)
    h = rep[:https]
    assert_equal "answered", h[:state]
    assert_equal 1, h[:lookups].size
    lk = h[:lookups][0]
    assert_equal ["HTTPS", "_#{@rport}._https.svc.test.", "answered", 2], lk.values_at(:query, :name, :state, :records)
    svc = h[:services][0]
    assert_equal [1, 1, "svc.test.", @lport, %w[h2 http/1.1], false], svc.values_at(:number, :priority, :target, :port, :alpn, :ech)
    assert_equal [[2, ".", "no protocol in common (h3)"]], h[:skipped].map { |k| k.values_at(:priority, :target, :reason) }
    assert_empty h[:replaced]
    won = rep[:attempts][rep[:winner]]
    assert_equal [@lport, 1, "service"], won.values_at(:port, :service, :origin)
  end

  def test_alias_target_lookups_and_a_replaced_hint
    rep = report("alias.test", @rport, https_rr: true)
    h = rep[:https]
    assert_equal "answered", h[:state]
    got = h[:lookups].map { |l| l.values_at(:query, :name, :state) }
    assert_equal [["HTTPS", "_#{@rport}._https.alias.test.", "answered"], ["HTTPS", "cdn.test.", "answered"],
                  ["A", "target.test.", "answered"]], got.first(3)
    assert_equal [0, 1], h[:lookups].first(2).map { |l| l[:records] }
    assert_equal ["target.test.", @lport, 1], h[:services][0].values_at(:target, :port, :hints)
    first = rep[:attempts][0]
    if first[:origin] == "hint"
      assert_equal ["127.0.0.9", 1], first.values_at(:address, :service)
    else
      assert_equal [[1, "127.0.0.9", @lport]], h[:replaced].map { |r| r.values_at(:service, :address, :port) }
    end
    assert_equal ["127.0.0.1", 1, "service"], rep[:attempts][rep[:winner]].values_at(:address, :service, :origin)
  end

  def test_nodata_and_the_origins_own_addresses
    e = assert_raises(Errno::ECONNREFUSED) { Hev2.tcp("plain.test", @rport, https_rr: true, report: true, **@ns) }
    rep = e.hev2_report
    h = rep[:https]
    assert_equal "nodata", h[:state]
    assert_empty h[:services]
    assert_equal "failed", h[:lookups][0][:state]
    assert_equal [[0, "dns"]], rep[:attempts].map { |a| a.values_at(:service, :origin) }
  end

  def test_no_https_part_without_https_rr
    rep = report("svc.test", @lport)
    assert_nil rep[:https]
    assert_equal [[0, "dns"]], rep[:attempts].map { |a| a.values_at(:service, :origin) }
    rep = Hev2.tcp("127.0.0.1", @lport, report: true) { |s| Hev2.report_of(s) }
    assert_nil rep[:https]
    assert_equal "static", rep[:attempts][0][:origin]
  end
end
