# frozen_string_literal: true

# The differential test (inside the test bed's client namespace; run.rb
# starts it): every case goes through Ruby's own Socket.tcp and Hev2.tcp,
# and through Ruby's own TCPSocket.new and TCPSocket.new under
# hev2/replace. The outcome of each (connected, or the exception class with
# error_code / errno) is printed as a table, and asserted identical, except
# for the documented differences of DIFFERENCES (bindings/ruby/README.md,
# "Where Hev2.tcp differs on purpose"), where hev2's RFC/documented outcome
# is asserted instead. A keyword the running Ruby rejects (open_timeout
# before 4.0, fast_fallback before 3.4) is not compared: hev2's outcome is
# then asserted to be the newest Ruby's (the case's :newest).
#
# Names are the bed's scenario names (resolved by its DNS server, or its
# hosts file); literals go to listeners on this namespace's loopback.

require "socket"
require "timeout"
require "minitest/autorun"
require "hev2"
require_relative "../loopback"

abort "differential.rb runs inside the test bed's client namespace (run.rb)" unless
  File.read("/etc/resolv.conf").include?("198.18.0.53")

BED_PORT = Integer(ARGV.fetch(0))
RUBY_GE = ->(v) { Gem::Version.new(RUBY_VERSION) >= Gem::Version.new(v) }

# Loopback endpoints: accepting on both families (one port), refusing, and
# SYN-dropping (a blackholed address without the bed).
V6, V4, LPORT = Loopback.dual_listeners
ACCEPTOR = Thread.new do
  loop do
    IO.select([V6, V4])[0].each do |l|
      c, = l.accept_nonblock(exception: false)
      c.close if c.is_a?(Socket)
    end
  end
end
REFUSE_PORT, REFUSE4, REFUSE6 = Loopback.one_port(->(p) { Loopback.refusing("127.0.0.1", p) },
                                                  ->(p) { Loopback.refusing("::1", p) })
DROP4, FILL4 = Loopback.syn_dropping("127.0.0.1")
DROP4_PORT = Loopback.port_of(DROP4)
DROP6, FILL6 = Loopback.syn_dropping("::1")
DROP6_PORT = Loopback.port_of(DROP6)
OPEN_TIMEOUT = defined?(IO::TimeoutError) ? "IO::TimeoutError" : "Errno::ETIMEDOUT"
RESOLV_TIMEOUT = if RUBY_GE.("3.4") then "Errno::ETIMEDOUT"
                 elsif RUBY_GE.("3.3") then "Socket::ResolutionError EAI_AGAIN"
                 else "SocketError"
                 end
NONAME = RUBY_GE.("3.3") ? "Socket::ResolutionError EAI_NONAME" : "SocketError"
T = 0.2 # the timeouts of the timeout cases (seconds)

# A case: label, the positional arguments (host, port[, local_host[,
# local_port]]), keywords; :newest is the outcome the newest Ruby gives for
# a keyword the running Ruby does not take (hev2 is held to it).
Case = Struct.new(:label, :args, :kw, :newest, keyword_init: true)
def c(label, *args, newest: nil, **kw)
  Case.new(label: label, args: args, kw: kw, newest: newest)
end

NAME = "dual-stack.hev2.test"
CASES = [
  # hosts: names (the bed's DNS and hosts file)
  c("name dual-stack", NAME, BED_PORT),
  c("name v4-only", "v4-only.hev2.test", BED_PORT),
  c("name v6-only", "v6-only.hev2.test", BED_PORT),
  c("name v6-refused", "v6-refused.hev2.test", BED_PORT),
  c("name aaaa-servfail", "aaaa-servfail.hev2.test", BED_PORT),
  c("name hosts file", "hostsfile.hev2.test", BED_PORT),
  c("name trailing dot", "#{NAME}.", BED_PORT),
  c("name localhost", "localhost", LPORT),
  c("name all-refused", "all-refused.hev2.test", BED_PORT),
  c("name nxdomain", "nxdomain.hev2.test", BED_PORT),
  c("name unknown", "no-such-name.hev2.test", BED_PORT),
  c("name empty label", "a..hev2.test", BED_PORT),
  c("name label > 63", "#{"a" * 70}.hev2.test", BED_PORT),
  c("name > 255", "#{"abcdefgh." * 30}hev2.test", BED_PORT),
  c("name > 1024", "#{"a" * 1100}.hev2.test", BED_PORT),
  c("name not a literal 256.1.1.1", "256.1.1.1", BED_PORT),
  c("name with NUL", "dual\0stack.hev2.test", BED_PORT),
  # hosts: literals (loopback)
  c("literal 127.0.0.1", "127.0.0.1", LPORT),
  c("literal ::1", "::1", LPORT),
  c("literal ::ffff:127.0.0.1", "::ffff:127.0.0.1", LPORT),
  c("literal 127.1 (inet_aton)", "127.1", LPORT),
  c("literal 2130706433 (inet_aton)", "2130706433", LPORT),
  c("literal 0.0.0.0", "0.0.0.0", LPORT),
  c("literal ::", "::", LPORT),
  c("literal 127.0.0.1 refused", "127.0.0.1", REFUSE_PORT),
  c("literal ::1 refused", "::1", REFUSE_PORT),
  c("bracketed [::1]", "[::1]", LPORT),
  c("bracketed [127.0.0.1]", "[127.0.0.1]", LPORT),
  c("zone ::1%lo", "::1%lo", LPORT),
  c("zone ::1%1", "::1%1", LPORT),
  c("zone ::1%nosuchif", "::1%nosuchif", LPORT),
  c("zone 2001:db8::10%c6 (bed)", "2001:db8::10%c6", BED_PORT),
  c("zone 127.0.0.1%lo", "127.0.0.1%lo", LPORT),
  # hosts: special and other types
  c("host empty", "", LPORT),
  c("host nil", nil, LPORT),
  c("host <any>", "<any>", LPORT),
  c("host Integer 0x7f000001", 0x7f000001, LPORT),
  c("host Integer -1", -1, LPORT),
  c("host Symbol", :localhost, LPORT),
  c("host Float", 1.5, LPORT),
  c("host Array", ["127.0.0.1"], LPORT),
  # ports
  c("port String", "127.0.0.1", LPORT.to_s),
  c("port String on a name", NAME, BED_PORT.to_s),
  c("port service http (refused)", "127.0.0.1", "http"),
  c("port unknown service", "127.0.0.1", "no-such-service"),
  c("port unknown service on a name", NAME, "no-such-service"),
  c("port 0", "127.0.0.1", 0),
  c("port 65536", "127.0.0.1", 65_536),
  c("port 65536 + LPORT", "127.0.0.1", 65_536 + LPORT),
  c("port -1", "127.0.0.1", -1),
  c("port -1 on a name", NAME, -1),
  c("port -2", "127.0.0.1", -2),
  c("port 2**32 + LPORT", "127.0.0.1", 2**32 + LPORT),
  c("port 2**62", "127.0.0.1", 2**62),
  c("port 2**64", "127.0.0.1", 2**64),
  c("port String -1", "127.0.0.1", "-1"),
  c("port String 65536", "127.0.0.1", "65536"),
  c("port String 2**32 + LPORT", "127.0.0.1", (2**32 + LPORT).to_s),
  c("port String -(2**32 - LPORT)", "127.0.0.1", (-(2**32 - LPORT)).to_s),
  c("port String 2**64", "127.0.0.1", (2**64).to_s),
  c("port String ' LPORT'", "127.0.0.1", " #{LPORT}"),
  c("port String '+LPORT'", "127.0.0.1", "+#{LPORT}"),
  c("port String '0LPORT'", "127.0.0.1", "0#{LPORT}"),
  c("port String 'LPORT '", "127.0.0.1", "#{LPORT} "),
  c("port String 0x50", "127.0.0.1", "0x50"),
  c("port String empty", "127.0.0.1", ""),
  c("port String 80x", "127.0.0.1", "80x"),
  c("port nil", "127.0.0.1", nil),
  c("port Float", "127.0.0.1", LPORT.to_f),
  c("port Symbol", "127.0.0.1", :http),
  # local addresses
  c("local 127.0.0.1", "127.0.0.1", LPORT, "127.0.0.1"),
  c("local 127.0.0.1 port", "127.0.0.1", LPORT, "127.0.0.1", :free),
  c("local ::1 to ::1", "::1", LPORT, "::1"),
  c("local ::1 to 127.0.0.1", "127.0.0.1", LPORT, "::1"),
  c("local 127.0.0.1 to ::1", "::1", LPORT, "127.0.0.1"),
  c("local name localhost", "127.0.0.1", LPORT, "localhost"),
  c("local bed v4 to a name", NAME, BED_PORT, "198.18.0.129"),
  c("local bed v6 to a name", NAME, BED_PORT, "2001:db8::8000:0:0:1"),
  c("local not ours", "127.0.0.1", LPORT, "198.18.9.9"),
  c("local nxdomain", "127.0.0.1", LPORT, "nxdomain.hev2.test"),
  c("local empty", "127.0.0.1", LPORT, ""),
  c("local Integer", "127.0.0.1", LPORT, 5),
  c("local port only", "127.0.0.1", LPORT, nil, :free),
  c("local port String", "127.0.0.1", LPORT, "127.0.0.1", :free_s),
  c("local port bad service", "127.0.0.1", LPORT, "127.0.0.1", "no-such-service"),
  c("local port -1", "127.0.0.1", LPORT, "127.0.0.1", -1),
  c("local port 65536 + free", "127.0.0.1", LPORT, "127.0.0.1", :free_wrapped),
  # timeouts, alone and combined
  c("connect_timeout ok", NAME, BED_PORT, connect_timeout: 2),
  c("connect_timeout literal blackholed", "127.0.0.1", DROP4_PORT, connect_timeout: T),
  c("connect_timeout ::1 blackholed", "::1", DROP6_PORT, connect_timeout: T),
  c("connect_timeout name blackholed", "connect-timeout.hev2.test", BED_PORT, connect_timeout: T),
  c("connect_timeout 0 blackholed", "127.0.0.1", DROP4_PORT, connect_timeout: 0),
  c("connect_timeout refused", "127.0.0.1", REFUSE_PORT, connect_timeout: T),
  c("resolv_timeout ok", NAME, BED_PORT, resolv_timeout: 2),
  c("resolv_timeout never answered", "resolv-timeout.hev2.test", BED_PORT, resolv_timeout: T),
  c("resolv_timeout literal", "127.0.0.1", LPORT, resolv_timeout: T),
  c("resolv_timeout nxdomain", "nxdomain.hev2.test", BED_PORT, resolv_timeout: 2),
  c("both ok", NAME, BED_PORT, resolv_timeout: 2, connect_timeout: 2),
  c("both, never answered", "resolv-timeout.hev2.test", BED_PORT, resolv_timeout: T, connect_timeout: 2),
  c("both, blackholed", "connect-timeout.hev2.test", BED_PORT, resolv_timeout: 2, connect_timeout: T),
  c("open_timeout ok", NAME, BED_PORT, open_timeout: 2, newest: "ok"),
  c("open_timeout literal blackholed", "127.0.0.1", DROP4_PORT, open_timeout: T,
    newest: OPEN_TIMEOUT),
  c("open_timeout name blackholed", "connect-timeout.hev2.test", BED_PORT, open_timeout: T,
    newest: OPEN_TIMEOUT),
  c("open_timeout never answered", "resolv-timeout.hev2.test", BED_PORT, open_timeout: T,
    newest: OPEN_TIMEOUT),
  c("open_timeout with connect_timeout", NAME, BED_PORT, open_timeout: 1, connect_timeout: 1,
    newest: "ArgumentError"),
  c("open_timeout with resolv_timeout", NAME, BED_PORT, open_timeout: 1, resolv_timeout: 1,
    newest: "ArgumentError"),
  c("connect_timeout nil", "127.0.0.1", LPORT, connect_timeout: nil),
  c("connect_timeout String", "127.0.0.1", LPORT, connect_timeout: "1"),
  c("connect_timeout negative", "127.0.0.1", LPORT, connect_timeout: -1),
  c("resolv_timeout String", NAME, BED_PORT, resolv_timeout: "1"),
  c("resolv_timeout negative literal", "127.0.0.1", LPORT, resolv_timeout: -1),
  c("resolv_timeout -Infinity literal", "127.0.0.1", LPORT, resolv_timeout: -Float::INFINITY),
  c("resolv_timeout negative ::1", "::1", LPORT, resolv_timeout: -0.5),
  c("resolv_timeout negative, never answered", "resolv-timeout.hev2.test", BED_PORT, resolv_timeout: -1),
  c("resolv_timeout negative, fast_fallback false", NAME, BED_PORT, resolv_timeout: -1, fast_fallback: false,
    newest: "ok"),
  # fast_fallback
  c("fast_fallback false", NAME, BED_PORT, fast_fallback: false, newest: "ok"),
  c("fast_fallback true", NAME, BED_PORT, fast_fallback: true, newest: "ok"),
  c("fast_fallback nil", NAME, BED_PORT, fast_fallback: nil, newest: "ok"),
  c("fast_fallback false, v6 refused", "v6-refused.hev2.test", BED_PORT, fast_fallback: false, newest: "ok"),
  c("fast_fallback false, nxdomain", "nxdomain.hev2.test", BED_PORT, fast_fallback: false,
    newest: NONAME),
  c("fast_fallback false + connect_timeout", "connect-timeout.hev2.test", BED_PORT, fast_fallback: false,
    connect_timeout: T, newest: "Errno::ETIMEDOUT"),
  c("fast_fallback false + resolv_timeout", "resolv-timeout.hev2.test", BED_PORT, fast_fallback: false,
    resolv_timeout: T, newest: RESOLV_TIMEOUT),
  # wrong keywords
  c("unknown keyword", "127.0.0.1", LPORT, bogus: 1),
].freeze

# Where hev2 differs from a Ruby on purpose: label => [whether it applies
# to the running Ruby, the Ruby-side columns it concerns, hev2's outcome
# (asserted), why]. Each is listed in the README ("Where Hev2.tcp differs
# on purpose").
RUBY34 = RUBY_GE.("3.4")
BOTH = %i[socket tcpsocket].freeze
WRAP_RULE = "a port getaddrinfo cuts to 16 bits (Ruby connects to port % 65536) is an ArgumentError " \
            "before anything is sent: hev2 never connects to a port other than the one asked for"
PORT0_RULE = "port 0 (nil, \"\", 0) is an ArgumentError before anything is sent: the library refuses " \
             "port 0 as a destination (Ruby sends SYNs to port 0, which no server can listen on)"
DIFFERENCES = {
  "fast_fallback false + resolv_timeout" => [
    RUBY34, BOTH, "Errno::ETIMEDOUT",
    "resolv_timeout bounds the lookup with fast_fallback: false too; Ruby 3.4 ignores it there",
  ],
  "local bed v4 to a name" => [RUBY34, %i[socket], "ok", "local_host with a name works (Ruby 3.4 Socket.tcp: Bug #21512)"],
  "local bed v6 to a name" => [RUBY34, %i[socket], "ok", "local_host with a name works (Ruby 3.4 Socket.tcp: Bug #21512)"],
  "host Integer 0x7f000001" => [RUBY34, %i[socket], "ok",
                                "an Integer host is an IPv4 address, as TCPSocket.new and Socket.tcp before 3.4 " \
                                "take it (Ruby 3.4 Socket.tcp: NoMethodError)"],
  "host Integer -1" => [RUBY34, %i[socket], "Errno::ENETUNREACH", "as above (-1 is 255.255.255.255)"],
  "host Float" => [RUBY34, %i[socket], "TypeError", "a host of a wrong type is a TypeError (Ruby 3.4 Socket.tcp: NoMethodError)"],
  "host Array" => [RUBY34, %i[socket], "TypeError", "as above"],
  "literal ::ffff:127.0.0.1" => [!RUBY34, %i[socket], "ok",
                                 "an IPv4-mapped literal connects, as TCPSocket.new does (Ruby 3.1 Socket.tcp: ENETUNREACH)"],
  "resolv_timeout String" => [!RUBY34, BOTH, "TypeError",
                              "a timeout of a wrong type is a TypeError, as in Ruby 3.4 (3.1 ignores it for a fast answer)"],
}
["port 65536", "port 65536 + LPORT", "port String 65536", "port String 2**32 + LPORT",
 "port String -(2**32 - LPORT)"].each { |l| DIFFERENCES[l] = [true, BOTH, "ArgumentError", WRAP_RULE] }
# Only TCPSocket.new cuts an Integer beyond a C int (Socket.tcp's
# Addrinfo.getaddrinfo raises RangeError, as Hev2.tcp does).
DIFFERENCES["port 2**32 + LPORT"] = [true, %i[tcpsocket], "ArgumentError", WRAP_RULE]
# Ruby binds local port (65536 + free) % 65536 = free, not the one given.
DIFFERENCES["local port 65536 + free"] = [true, BOTH, "ArgumentError", WRAP_RULE]
["port 0", "port String empty", "port nil"].each { |l| DIFFERENCES[l] = [true, BOTH, "ArgumentError", PORT0_RULE] }
DIFFERENCES.freeze

TOO_NEW = /unknown keyword: :(open_timeout|fast_fallback)/

# The outcome of one call: "ok" or the exception's class (the first
# ancestor outside Hev2, since Hev2::ResolutionError is-a
# Socket::ResolutionError / SocketError), with error_code where the Ruby
# sets one and the errno of a SystemCallError that is no Errno:: class.
def outcome
  Timeout.timeout(10) do
    s = yield
    s.close
    "ok"
  end
rescue Timeout::Error
  "HUNG (10 s)"
rescue StandardError, ScriptError => e
  k = e.class.ancestors.find { |a| a.is_a?(Class) && !a.name.to_s.start_with?("Hev2::") }
  text = k.name.dup
  text << " #{eai_name(e.error_code)}" if e.respond_to?(:error_code) && !e.is_a?(Hev2::ResolutionError) ||
                                          e.is_a?(Hev2::ResolutionError) && RUBY_GE.("3.3")
  text << " errno #{e.errno}" if e.is_a?(SystemCallError) && !k.name.start_with?("Errno::")
  text << " (#{e.message[0, 70]})" if e.is_a?(ArgumentError) && e.message.match?(TOO_NEW)
  text
end

EAI = Socket.constants.grep(/\AEAI_/).to_h { |n| [Socket.const_get(n), n.to_s] }
def eai_name(code)
  EAI.fetch(code, code.inspect)
end

# A local port no earlier call used (a reused one may meet its own TIME_WAIT).
# A port nothing holds on any address: bound on the wildcard address and
# without SO_REUSEADDR, so that the kernel never offers a port some earlier
# case's TIME_WAIT socket still holds on 127.0.0.1 (a reuse-address bind may
# get one; the connect under test, which binds the wildcard address without
# SO_REUSEADDR, would then fail with EADDRINUSE).
def free_port
  s = Socket.new(:INET, :STREAM)
  s.bind(Addrinfo.tcp("0.0.0.0", 0))
  Loopback.port_of(s)
ensure
  s&.close
end

def call(how, kase)
  args = kase.args.map do |a|
    { free: -> { free_port }, free_s: -> { free_port.to_s }, free_wrapped: -> { 65_536 + free_port } }
      .fetch(a, -> { a }).call
  end
  kw = kase.kw
  outcome do
    case how
    when :socket, :hev2_socket then Socket.tcp(*args, **kw)
    when :hev2 then Hev2.tcp(*args, **kw)
    when :tcpsocket, :hev2_tcpsocket then TCPSocket.new(*args, **kw)
    end
  end
end

# Ruby's own first, then the same process with hev2/replace.
ROWS = CASES.map { |k| { case: k, socket: call(:socket, k), hev2: call(:hev2, k), tcpsocket: call(:tcpsocket, k) } }
require "hev2/replace"
ROWS.each { |r| r[:hev2_tcpsocket] = call(:hev2_tcpsocket, r[:case]); r[:hev2_socket] = call(:hev2_socket, r[:case]) }

# A row's verdict for one pair (Ruby's, hev2's).
def verdict(row, ruby_col, hev2_col)
  ruby = row[ruby_col]
  hev2 = row[hev2_col]
  kase = row[:case]
  if ruby.match?(TOO_NEW)
    [:extra, kase.newest || "no :newest for #{kase.label}", hev2]
  elsif (d = DIFFERENCES[kase.label]) && d[0] && d[1].include?(ruby_col)
    [:documented, d[2], hev2]
  elsif ruby_col == :tcpsocket && RUBY34 && kase.label.start_with?("zone ") &&
        ruby.split.first == hev2.split.first
    # Ruby 3.4's TCPSocket.new looks each family up on its own thread and
    # reports the code of whichever failed last: EAI_NONAME or
    # EAI_ADDRFAMILY from run to run. The class is compared.
    [:same, ruby, ruby]
  elsif ruby.end_with?(" nil") && hev2.start_with?(ruby.delete_suffix(" nil"))
    # the Ruby sets no error_code (3.4 Socket.tcp's Happy Eyeballs path)
    [:same, ruby, ruby]
  else
    [:same, ruby, hev2]
  end
end

PAIRS = [%i[socket hev2], %i[tcpsocket hev2_tcpsocket], %i[socket hev2_socket]].freeze
MARK = { same: "=", documented: "DOC", extra: "NEW" }.freeze

w = ROWS.map { |r| r[:case].label.size }.max
cw = 34
puts "\nRuby #{RUBY_VERSION}: #{ROWS.size} cases (Socket.tcp | Hev2.tcp | TCPSocket.new | TCPSocket.new + hev2/replace)"
puts format("%-#{w}s  %-#{cw}s %-#{cw}s %-#{cw}s %-#{cw}s %s", "case", "Socket.tcp", "Hev2.tcp",
            "TCPSocket.new", "TCPSocket.new+replace", "verdict")
counts = Hash.new(0)
ROWS.each do |r|
  marks = PAIRS.map do |rc, hc|
    kind, want, got = verdict(r, rc, hc)
    want == got ? MARK[kind] : "DIFF"
  end
  kind = if marks.include?("DIFF") then :mismatch
         elsif marks.include?("DOC") then :documented
         elsif marks.include?("NEW") then :extra
         else :identical
         end
  counts[kind] += 1
  puts format("%-#{w}s  %-#{cw}s %-#{cw}s %-#{cw}s %-#{cw}s %s", r[:case].label,
              *%i[socket hev2 tcpsocket hev2_tcpsocket].map { |k| r[k][0, cw] }, marks.uniq.join(","))
end
puts "Ruby #{RUBY_VERSION}: #{ROWS.size} cases: #{counts[:identical]} identical, " \
     "#{counts[:documented]} documented differences, #{counts[:extra]} compared to the newest Ruby " \
     "(keywords this Ruby lacks), #{counts[:mismatch]} mismatches"
DIFFERENCES.each do |label, (applies, cols, want, why)|
  puts "  documented (#{cols.join("/")}): #{label}: hev2 #{want}; #{why}" if applies
end

class TestDifferential < Minitest::Test
  ROWS.each_with_index do |row, i|
    define_method(format("test_%03d_%s", i, row[:case].label.gsub(/\W+/, "_"))) do
      PAIRS.each do |rc, hc|
        kind, want, got = verdict(row, rc, hc)
        assert_equal want, got, "#{row[:case].label}: #{hc} against #{rc} (#{kind})"
      end
    end
  end

  def test_no_leftovers
    assert_equal 0, Hev2.stats[:handles_live]
  end
end
