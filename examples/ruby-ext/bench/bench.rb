# frozen_string_literal: true

# Completion latency (make bench-extension-ruby): the time from the library
# finishing a connect to the interpreter running its completion, through
# Hev2Ext's postponed job and through the gem's handle path, interleaved.
#
#   HEV2_LIBRARY=build/libhev2.so ruby -I <dir of hev2_ext.so> -I bindings/ruby/lib \
#     examples/ruby-ext/bench/bench.rb [CONNECTS]
#
# Each connect is a real race decided on a library thread, after the
# connect call has returned: ::1 drops SYNs, 127.0.0.1 listens on the same
# port, and IPv4 starts (and connects at once) one attempt delay (10 ms)
# after IPv6. History is off, so every race goes the same way.
#
# The moments, all CLOCK_MONOTONIC:
#   callback  Hev2Ext's C trigger callback (hev2's on_done, library thread)
#   decided   the race's outcome: the stamp taken just before hev2_connect
#             plus the library's elapsed_ms (hev2_connect to the outcome);
#             the one moment both paths have (the gem has no callback)
#   job       Hev2Ext's postponed job starts delivering this connect
#   has it    Ruby code holds the outcome: Pending#value returned (Hev2Ext),
#             IO#wait_readable on the handle's fd returned (the gem, as
#             Hev2::Connector waits with drive :library)
# Rows are printed idle (the waiting thread is the only Ruby thread at work)
# and with one more thread spinning in Ruby (holding the GVL whenever it
# can: every wait for the GVL is then up to a time slice, 100 ms).
require "socket"
require "io/wait"
require "hev2_ext"
require "hev2"
require_relative "../../../bindings/ruby/test/loopback"

module CompletionBench
  NAME = "race.hev2-ext.test"
  ADDRESSES = ["::1", "127.0.0.1"].freeze
  DELAY = 0.01
  N = Hev2::Native
  C = Hev2::Connector
  S = Hev2::Scratch
  L = Hev2::Layout

  module_function

  def now_ns
    Process.clock_gettime(Process::CLOCK_MONOTONIC, :nanosecond)
  end

  # One connect through Hev2Ext: [callback -> job, decided -> job,
  # decided -> has it] in microseconds.
  def ext_once(port)
    pe = Hev2Ext.connect(NAME, port, addresses: ADDRESSES, attempt_delay: DELAY, history: false)
    sock = pe.value
    has_it = now_ns
    sock.close
    decided = pe.started_ns + (pe.elapsed_ms * 1e6)
    [(pe.job_ns - pe.finished_ns) / 1e3, (pe.job_ns - decided) / 1e3, (has_it - decided) / 1e3]
  end

  # The same connect through the gem's handle path (Hev2::Connector.wait's
  # calls, with drive :library and no first wait in the library): decided
  # -> has it, in microseconds.
  def gem_once(port, req)
    s = S.acquire
    host, keep = C.fill_options(s, req, false)
    started = now_ns
    rc = C::CONNECT.call(Fiddle::Pointer[host].to_i, host.bytesize, s.port_string(port),
                         s.address + S::OPTIONS, s.address + S::OUT)
    raise "hev2_connect: #{N.strerror(rc)}" unless rc == N::OK

    keep.clear
    conn = s.u64(S::OUT)
    begin
      io = IO.for_fd(C::EVENTFD.call(conn), autoclose: false)
      io.wait_readable
      has_it = now_ns
      raise "hev2_result: #{N.strerror(rc)}" unless (rc = C::RESULT.call(conn, s.address + S::RESULT)) == N::OK
      raise "the race failed: #{N.errmsg(conn)}" unless s.i32(S::RESULT + L::RESULT[:status]) == N::OK

      Socket.for_fd(s.i32(S::RESULT + L::RESULT[:fd])).close
      decided = started + (s.f64(S::RESULT + L::RESULT[:elapsed_ms]) * 1e6)
      [(has_it - decided) / 1e3]
    ensure
      C::RELEASE.call(conn)
    end
  ensure
    S.release(s) if s
  end

  def drain(srv)
    loop { srv.accept_nonblock.first.close }
  rescue IO::WaitReadable
    nil
  end

  # Runs n rounds of both paths (their order swapped every round).
  def measure(n, port, srv)
    req = Hev2::Arguments.build(NAME, port, nil, nil, nil, nil, nil, true,
                                { addresses: ADDRESSES, connection_attempt_delay: DELAY, history: false })
    ext = []
    gem = []
    n.times do |i|
      runs = [-> { ext << ext_once(port) }, -> { gem << gem_once(port, req) }]
      (i.even? ? runs : runs.reverse).each(&:call)
      drain(srv)
    end
    [ext.transpose, gem.transpose]
  end

  def while_busy(threads)
    stop = false
    spins = Array.new(threads, 0)
    busy = Array.new(threads) { |i| Thread.new { spins[i] += 1 until stop } }
    Thread.pass until spins.all?(&:positive?)
    yield
  ensure
    stop = true
    busy&.each(&:join)
  end

  def quantile(sorted, q)
    sorted[((sorted.size - 1) * q).round]
  end

  def row(label, values)
    v = values.sort
    printf("  %-58s %9.1f %9.1f %9.1f %9.1f\n", label, quantile(v, 0.5), quantile(v, 0.1), quantile(v, 0.9), v.last)
  end

  def print_rows(title, n, (ext, gem))
    puts "#{title} (#{n} connects per row; microseconds)"
    printf("  %-58s %9s %9s %9s %9s\n", "", "median", "p10", "p90", "max")
    row("Hev2Ext: C trigger callback -> postponed job runs", ext[0])
    row("Hev2Ext: race decided -> postponed job runs", ext[1])
    row("Hev2Ext: race decided -> Pending#value returned", ext[2])
    row("gem handle path: race decided -> wait_readable returned", gem[0])
  end

  def run(n)
    port, v6, srv = Loopback.one_port(->(p) { Loopback.syn_dropping("::1", p) },
                                      ->(p) { Loopback.listener("127.0.0.1", 1024, p) })
    puts "Ruby #{RUBY_VERSION}: Hev2Ext's completion through #{Hev2Ext::POSTPONED_JOB_API}; " \
         "the gem's through the handle's eventfd (libhev2 #{Hev2Ext::LIBRARY_VERSION})"
    measure(3, port, srv) # warm up both paths
    print_rows("idle", n, measure(n, port, srv))
    busy_n = [n / 10, 10].max
    print_rows("one Ruby thread spinning", busy_n, while_busy(1) { measure(busy_n, port, srv) })
  ensure
    [v6, srv].flatten.compact.each(&:close)
  end
end

CompletionBench.run(Integer(ARGV.fetch(0, "200")))
