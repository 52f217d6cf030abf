# frozen_string_literal: true

# Soak: N Hev2.tcp calls (default 100,000), mixed across success, refusal
# and timeout, from four threads; every tenth of the run the process's RSS,
# fds and threads and the library's live handles are printed. Passes (exit
# 0) when fds, threads and live handles come back to their baseline after
# the warm-up.
#
#   ruby -Ibindings/ruby/lib bindings/ruby/bench/soak.rb [N]
#
# Destinations are spread over 127.0.0.1-127.0.0.200 (all loopback, one
# listener on 0.0.0.0) so TIME_WAIT sockets do not pile up on one address.
require "socket"
require "hev2"

THREADS = 4

def rss_kib = File.read("/proc/self/status")[/^VmRSS:\s+(\d+)/, 1].to_i
def os_threads = Dir.children("/proc/self/task").size
def fds = Dir.children("/proc/self/fd").size
def counts = [rss_kib, fds, os_threads, Hev2.stats[:handles_live]]

total = (ARGV[0] || 100_000).to_i
accept = TCPServer.new("0.0.0.0", 0)
drop = Socket.new(:INET, :STREAM)
drop.bind(Addrinfo.tcp("0.0.0.0", 0))
drop.listen(0)
filler = Socket.new(:INET, :STREAM)
begin
  filler.connect_nonblock(Addrinfo.tcp("127.0.0.1", drop.local_address.ip_port))
rescue IO::WaitWritable, Errno::EINPROGRESS
  nil
end
closed = TCPServer.new("127.0.0.1", 0)
refused_port = closed.addr[1]
closed.close
Thread.new { loop { accept.accept.close } }
accept_port = accept.addr[1]
drop_port = drop.local_address.ip_port

done = 0
unexpected = 0
lock = Mutex.new
work = lambda do |n, seed|
  rng = Random.new(seed)
  n.times do
    host = "127.0.0.#{rng.rand(1..200)}"
    case rng.rand(9)
    when 0..3 then Hev2.tcp(host, accept_port).close
    when 4..7
      begin
        Hev2.tcp(host, refused_port)
        raise "connected to a closed port"
      rescue Errno::ECONNREFUSED
        nil
      end
    else
      begin
        Hev2.tcp(host, drop_port, connect_timeout: 0.002)
        raise "connected to a dropping listener"
      rescue Errno::ETIMEDOUT, IO::TimeoutError
        nil
      end
    end
  rescue StandardError
    lock.synchronize { unexpected += 1 }
  ensure
    lock.synchronize { done += 1 }
  end
end
run = ->(n) { Array.new(THREADS) { |i| Thread.new { work.call(n / THREADS, i) } }.each(&:join) }

run.call(2000) # warm-up: permanent fds, a wake fd per thread
sleep 0.2
base = counts
done = 0
puts "soak: #{total} Hev2.tcp (success, refusal, timeout) from #{THREADS} threads on Ruby #{RUBY_VERSION}"
puts format("%10s %10s %6s %8s %6s %7s", "connects", "RSS KiB", "fds", "threads", "live", "s")
puts format("%10d %10d %6d %8d %6d %7.1f", 0, *base, 0.0)
t0 = Process.clock_gettime(Process::CLOCK_MONOTONIC)
runner = Thread.new { run.call(total) }
step = [total / 10, 1].max
nxt = step
# Threads are judged by their peaks in the first and the second half of the
# run: Ruby keeps exited threads' native threads for reuse and the Go runtime
# never gives an M back, so the count settles above the baseline; a leak
# would keep it growing.
thread_peak = [base[2], 0]
while runner.alive?
  sleep 0.05
  now = counts
  half = done * 2 >= total ? 1 : 0
  thread_peak[half] = [thread_peak[half], now[2]].max
  next if done < nxt

  puts format("%10d %10d %6d %8d %6d %7.1f", done, *now, Process.clock_gettime(Process::CLOCK_MONOTONIC) - t0)
  $stdout.flush
  nxt += step
end
runner.join
sleep 0.2
after = counts
puts "after: RSS #{format('%+d', after[0] - base[0])} KiB, fds #{base[1]} -> #{after[1]}, " \
     "threads #{base[2]} -> #{after[2]}, live handles #{base[3]} -> #{after[3]}, unexpected #{unexpected}"
puts "threads, peak: first half #{thread_peak[0]}, second half #{thread_peak[1]}"
flat = after[1] <= base[1] && thread_peak[1] <= thread_peak[0] + 1 && after[3] == base[3] && unexpected.zero?
puts "soak: #{flat ? 'flat' : 'NOT FLAT'}"
exit(flat ? 0 : 1)
