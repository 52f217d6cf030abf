# frozen_string_literal: true

# The HTTP clients of make test-ruby-clients, as users call them, each
# making one GET on a new connection and reporting what the bed's web server
# saw (it answers every request with JSON: peer, local, family, tls).
#
#   ruby clients.rb hev2|plain|https-rr   (inside the bed's client namespace; see run.rb)
#
# hev2: `require "hev2/replace"` first, then every client on the baseline
# and the stalling rows, one request at a time (they are timed). plain: Ruby's own connect,
# the stalling rows only, all at once, each capped at PLAIN_CAP seconds
# (shown, not judged). https-rr: hev2/replace, every client on the bed's
# HTTPS-record redirect (HEV2_BED_HTTPS_REDIRECT), with
# Hev2::Replace.defaults = { https_rr: [the bed's HTTPS port] } and then
# without it. One JSON document on stdout: the list of requests.

require "json"
require "net/http"
require "openssl"
require "timeout"
require "uri"

MODE = ARGV.fetch(0)
abort "usage: clients.rb hev2|plain|https-rr" unless %w[hev2 plain https-rr].include?(MODE)
require "hev2/replace" unless MODE == "plain"

# Loaded after hev2/replace: nothing of theirs is changed, they just call
# Socket.tcp / TCPSocket.open as always.
require "faraday"
require "net/http/persistent"

# The rows the issue names (tests/testbed/scenarios.go), and the healthy
# IPv4-only name whose request time is the exchange itself (twice: the
# fastest is the baseline, the first one also pays for loading code).
STALL_ROWS = %w[v6-blackhole aaaa-never].freeze
BASELINE = "v4-only"
PLAIN_CAP = 3.0

PORTS = { "http" => ENV.fetch("HEV2_BED_HTTP_PORT"), "https" => ENV.fetch("HEV2_BED_HTTPS_PORT") }.freeze
# The bed's certificate is the only one trusted, in one store made once:
# left to themselves, Faraday's adapter and net-http-persistent build a
# store of the system's CA bundle for every connection (about 100 ms of
# parsing here, varying with the machine's load), noise that would drown
# the tolerance the requests are judged by.
CERT_STORE = OpenSSL::X509::Store.new.tap { |s| s.add_file(ENV.fetch("HEV2_BED_CA_FILE")) }

# Each client: a lambda that GETs url on a new connection and returns the
# body. cap is nil with hev2 (the clients' defaults) or PLAIN_CAP.
CLIENTS = {
  "net-http" => lambda do |url, cap|
    uri = URI(url)
    http = Net::HTTP.new(uri.host, uri.port)
    http.use_ssl = uri.scheme == "https"
    http.cert_store = CERT_STORE
    http.open_timeout = http.read_timeout = cap if cap
    http.start { |h| h.get(uri.path).body }
  end,
  "faraday" => lambda do |url, cap|
    # Faraday 1.x's default adapter: Net::HTTP.
    request = cap ? { open_timeout: cap, timeout: cap } : {}
    conn = Faraday.new(url: url, ssl: { cert_store: CERT_STORE }, request: request)
    conn.get.body
  end,
  "net-http-persistent" => lambda do |url, cap|
    http = Net::HTTP::Persistent.new(name: "hev2-test")
    http.cert_store = CERT_STORE
    http.open_timeout = http.read_timeout = cap if cap
    begin
      http.request(URI(url)).body
    ensure
      http.shutdown
    end
  end,
}.freeze

def now = Process.clock_gettime(Process::CLOCK_MONOTONIC)

# Connections libhev2 made so far (hev2 mode): each request must add one,
# the proof that the client's connect went through hev2/replace.
def hev2_handles = MODE == "plain" ? 0 : Hev2.stats.fetch(:handles_created)

def request(client, row, scheme, cap)
  url = "#{scheme}://#{row}.hev2.test:#{PORTS.fetch(scheme)}/#{client}/#{row}"
  out = { client: client, row: row, scheme: scheme, hev2: MODE == "hev2" }
  handles = hev2_handles
  start = now
  begin
    body = cap ? Timeout.timeout(cap) { CLIENTS.fetch(client).call(url, cap) } : CLIENTS.fetch(client).call(url, cap)
    out[:seen] = JSON.parse(body)
  rescue StandardError, Timeout::Error => e
    out[:error] = "#{e.class}: #{e.message}"[0, 200]
  end
  out.merge(elapsed_ms: ((now - start) * 1000).round(1), hev2_connects: hev2_handles - handles)
end

# The judged rows' ideal and tolerance (hev2-testbed run's HEV2_BED_ROWS).
ROW_INFO = JSON.parse(ENV.fetch("HEV2_BED_ROWS")).to_h { |r| [r["name"], r] }
TRIES = 3

# Per client and scheme: the two baseline requests, then each stalling row
# up to TRIES times, stopping at the first try within the row's ideal +
# tolerance beyond the faster baseline: noise on a shared machine only adds
# time, and a client that stalls stalls on every try (run.rb checks every
# try's winner and judges the best one's time).
def hev2_requests(client, scheme)
  base = [BASELINE, BASELINE].map { request(client, BASELINE, scheme, nil) }
  fastest = base.reject { |b| b[:error] }.map { |b| b[:elapsed_ms] }.min
  base + STALL_ROWS.flat_map do |row|
    info = ROW_INFO.fetch(row)
    (1..TRIES).each_with_object([]) do |n, tries|
      tries << request(client, row, scheme, nil).merge(try: n)
      last = tries.last
      break tries if last[:error] || fastest.nil? ||
                     last[:elapsed_ms] - fastest <= info["ideal_ms"] + info["tol_ms"]
    end
  end
end

# Whether e, or an error it wraps, says connection refused.
def refused?(e)
  seen = []
  until e.nil? || seen.include?(e)
    return true if e.is_a?(Errno::ECONNREFUSED) || e.message.downcase.include?("refused")

    seen << e
    e = e.respond_to?(:wrapped_exception) && e.wrapped_exception ? e.wrapped_exception : e.cause
  end
  false
end

# The HTTPS-record redirect (tests/testbed/README.md): the origin's own
# addresses refuse the HTTPS port, its HTTPS record sends the connection to
# another name and port, where only the origin's name gets a certificate.
# Each client GETs https://<origin>:<HTTPS port>/ with https_rr on for that
# port (Hev2::Replace.defaults), then off; run.rb judges.
def https_rr_requests(client)
  redirect = JSON.parse(ENV.fetch("HEV2_BED_HTTPS_REDIRECT"))
  url = "https://#{redirect.fetch('host')}:#{PORTS.fetch('https')}/#{client}/https-rr"
  [true, false].map do |on|
    Hev2::Replace.defaults = on ? { https_rr: [Integer(PORTS.fetch("https"))] } : {}
    out = { client: client, https_rr: on, url: url }
    handles = hev2_handles
    begin
      out[:seen] = JSON.parse(CLIENTS.fetch(client).call(url, 10.0))
    rescue StandardError => e
      out[:error] = "#{e.class}: #{e.message}"[0, 200]
      out[:refused] = refused?(e)
    ensure
      Hev2::Replace.defaults = {}
    end
    out.merge(hev2_connects: hev2_handles - handles)
  end
end

results =
  case MODE
  when "hev2"
    CLIENTS.keys.product(%w[http https]).flat_map { |c, s| hev2_requests(c, s) }
  when "https-rr"
    CLIENTS.keys.flat_map { |c| https_rr_requests(c) }
  else
    CLIENTS.keys.product(%w[http https], STALL_ROWS).map { |c, s, r| Thread.new { request(c, r, s, PLAIN_CAP) } }.map(&:value)
  end
puts JSON.generate(results)
