# frozen_string_literal: true

require "json"
require "monitor"

# The project's test DNS server for the tests: Go's tests/testdns, run
# as the hev2-testdns command (tests/cmd/hev2-testdns), a child process of
# the test. Per name and query type it answers addresses (at once or after
# a delay), NXDOMAIN, SERVFAIL, NODATA, or never; it records the queries it
# got. A name with no entry is NXDOMAIN, a type a known name has no entry
# for NODATA.
#
# #zone sets entries in the command's own JSON form (its doc comment has
# every field), HTTPS records (RFC 9460) among them: an "HTTPS" entry is a
# list of records, or an object whose "records" are the list (with
# "delay", "never", "rcode" ... beside); no records is NODATA. A record is
# written as its presentation form reads:
#
#   dns.zone("svc.test" => { "A" => ["127.0.0.1"] },
#            "_8080._https.svc.test" => { "HTTPS" => [
#              { "priority" => 1, "target" => ".", "port" => 8443, "alpn" => ["h2"],
#                "ech" => Base64.strict_encode64(ech_config_list) }] })
#
# priority 0 is AliasMode; target "." is the owner (for
# "_PORT._https.HOST", the name asked for a port other than 443: HOST);
# other keys: "mandatory", "no-default-alpn", "ipv4hint", "ipv6hint",
# "keyNNNNN"; { "malformed" => KIND } or { "rdata" => BASE64 } make a
# record that does not decode.
#
# The server is ready when new returns: it has printed the address it
# serves on (UDP and TCP). It stops on close, and on its own when this
# process ends (its stdin closes), so it never outlives a test.
#
# The command is $HEV2_TESTDNS (mk/ruby.mk sets it), or else the
# checkout's build/hev2-testdns (`make testdns`).
class TestDNSServer
  BINARY = ENV.fetch("HEV2_TESTDNS") { File.expand_path("../../../build/hev2-testdns", __dir__) }

  attr_reader :address

  def initialize(ip = "127.0.0.1", port = 53)
    listen = ip.include?(":") ? "[#{ip}]:#{port}" : "#{ip}:#{port}"
    raise "no #{BINARY}: build it with `make testdns` (or set HEV2_TESTDNS)" unless File.executable?(BINARY)

    @io = IO.popen([BINARY, "-listen", listen], "r+")
    @io.sync = true
    @address = @io.gets&.chomp
    @lock = Monitor.new
    @seen = 0
    return if @address

    close
    raise "#{BINARY} -listen #{listen} exited (#{$?.exitstatus}) before serving"
  end

  # type: "AAAA" or "A". One of: addrs: [...], nxdomain: true, servfail:
  # true, nodata: true, never: true; delay: seconds before answering.
  def set(name, type, addrs: nil, nxdomain: false, servfail: false, nodata: false, never: false, delay: 0)
    entry = { "addrs" => nodata ? [] : addrs || [], "never" => never, "delay" => delay }
    entry["rcode"] = "NXDOMAIN" if nxdomain
    entry["rcode"] = "SERVFAIL" if servfail
    command("zone" => { name => { type => entry } })
  end

  # Sets the (name, type) entries of zone, a Hash in the command's JSON
  # form (see above), replacing those the pairs had.
  def zone(zone)
    command("zone" => zone)
  end

  # The queries received since the last call, [name, type] each, oldest
  # first.
  def query_log
    @lock.synchronize do
      all = command("queries" => true)["queries"].map { |q| [q["name"], q["type"]] }
      all.drop(@seen).tap { @seen = all.size }
    end
  end

  def close
    return if @io.closed?

    @io.close_write
    @io.read # until it exits
    @io.close
  end

  private

  def command(cmd)
    line = @lock.synchronize do
      @io.puts(JSON.generate(cmd))
      @io.gets
    rescue IOError, SystemCallError
      nil
    end
    raise "hev2-testdns exited" unless line

    reply = JSON.parse(line)
    raise ArgumentError, "hev2-testdns: #{reply["error"]} (command #{cmd})" if reply["error"]

    reply
  end
end
