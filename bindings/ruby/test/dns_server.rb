# frozen_string_literal: true

require "socket"
require "resolv"

# A small real DNS server (UDP) for the tests that run inside their own
# network namespace: per name and query type it answers addresses (at once
# or after a delay), NXDOMAIN, SERVFAIL, NODATA, or never. Messages are
# encoded with Ruby's own resolv library. It records the queries it got.
class TestDNSServer
  TYPES = { "AAAA" => Resolv::DNS::Resource::IN::AAAA, "A" => Resolv::DNS::Resource::IN::A }.freeze
  Rule = Struct.new(:addrs, :rcode, :delay, :never, keyword_init: true)

  attr_reader :queries

  def initialize(ip = "127.0.0.1", port = 53)
    @sock = UDPSocket.new(ip.include?(":") ? Socket::AF_INET6 : Socket::AF_INET)
    @sock.bind(ip, port)
    @rules = {}
    @queries = Queue.new
    @thread = Thread.new { serve }
  end

  # type: "AAAA" or "A". One of: addrs: [...], nxdomain: true, servfail:
  # true, nodata: true, never: true; delay: seconds before answering.
  def set(name, type, addrs: nil, nxdomain: false, servfail: false, nodata: false, never: false, delay: 0)
    rcode = if nxdomain then Resolv::DNS::RCode::NXDomain
            elsif servfail then Resolv::DNS::RCode::ServFail
            else Resolv::DNS::RCode::NoError
            end
    addrs = [] if nodata
    @rules[[name.downcase, type]] = Rule.new(addrs: addrs || [], rcode: rcode, delay: delay, never: never)
  end

  def query_log
    list = []
    list << @queries.pop until @queries.empty?
    list
  end

  def close
    @thread.kill
    @sock.close
  end

  private

  def serve
    loop do
      data, from = @sock.recvfrom(1500)
      Thread.new { answer(data, from) }
    end
  end

  # A known name asked for a type it has no rule for is NODATA; an unknown
  # name is NXDOMAIN.
  def default_rule(name)
    known = @rules.keys.any? { |n, _| n == name }
    Rule.new(addrs: [], rcode: known ? 0 : Resolv::DNS::RCode::NXDomain, delay: 0, never: false)
  end

  def answer(data, from)
    q = Resolv::DNS::Message.decode(data)
    name, klass = q.question.first
    type = TYPES.key(klass) || klass.name.split("::").last
    name = name.to_s.downcase
    @queries << [name, type]
    rule = @rules[[name, type]] || default_rule(name)
    return if rule.never

    sleep rule.delay if rule.delay.positive?
    r = Resolv::DNS::Message.new(q.id)
    r.qr = 1
    r.rd = q.rd
    r.ra = 1
    r.rcode = rule.rcode
    r.add_question(name, klass)
    rule.addrs.each { |a| r.add_answer(name, 60, klass.new(a)) } if rule.rcode.zero?
    @sock.send(r.encode, 0, from[3], from[1])
  rescue IOError, SystemCallError, Resolv::DNS::DecodeError
    nil
  end
end
