# frozen_string_literal: true

require "socket"
require "io/wait"
require_relative "native"
require_relative "scratch"
require_relative "errors"
require_relative "events"
require_relative "report"
require_relative "service"
require_relative "nogvl"
require_relative "plain_options"

module Hev2
  # Runs one connection through the C ABI, in one of two ways.
  #
  # On the caller's thread (the default where the C extension Hev2::NoGVL
  # is built, outside a non-blocking Fiber):
  #
  #   hev2_connect with drive = HEV2_DRIVE_WAITER (returns at once) ->
  #   Hev2::NoGVL.wait: hev2_wait(conn, -1) without the GVL, which plays
  #   the race on this thread -> hev2_result -> ::Socket.for_fd(winner fd)
  #
  # No library thread takes part on a healthy connect. Ruby interrupts the
  # wait (Thread#raise, Thread#kill, Timeout, Ctrl-C, any signal) through
  # the extension's unblocking function: the wait, made in slices of
  # NoGVL::SLICE_MS (5 ms), comes back to Ruby at the end of the slice in
  # progress, Ruby runs the interrupt (raises, or runs a trap handler), and
  # the wait goes on where it was if nothing was raised.
  #
  # Otherwise (no extension, HEV2_NO_EXT=1, or under a Fiber scheduler):
  #
  #   hev2_connect (the race on a library thread) -> wait for the handle's
  #   eventfd with IO#wait_readable -> hev2_result -> ::Socket.for_fd
  #
  # IO#wait_readable waits without the GVL, is woken by Thread#raise,
  # Thread#kill, Timeout and Ctrl-C, and under a Fiber scheduler becomes the
  # scheduler's io_wait, so other fibers run.
  #
  # Either way Ruby is never called from a library thread. Interrupts are
  # only accepted during the wait; around it they are deferred so that the
  # handle is always released and a winning fd is always either wrapped in
  # a Socket or closed: nothing is left behind.
  module Connector
    N = Native
    F = Native::F
    L = Layout
    CONNECT = F[:hev2_connect_len]
    RESULT = F[:hev2_result]
    EVENTFD = F[:hev2_fd]
    WAIT = F[:hev2_wait]
    RELEASE = F[:hev2_release]
    WRITE_TRACE = F[:hev2_write_trace]
    WAIT_ADDRESS = Native::WAIT_ADDRESS

    # Frozen and compare_by_identity: Ruby 3.2+ then uses the Hash as the
    # mask itself instead of building one per Thread.handle_interrupt call.
    DEFER = { Object => :never }.compare_by_identity.freeze
    ALLOW = { Object => :immediate }.compare_by_identity.freeze
    private_constant :DEFER, :ALLOW

    # hev2_options as hev2_options_init fills it (this gem's layout: the
    # 1.3 struct with `drive` and `history`, so the size is given explicitly).
    DEFAULT_OPTIONS = begin
      s = Scratch.new
      rc = F[:hev2_options_init_size].call(s.address + Scratch::OPTIONS, L::OPTIONS_SIZE)
      raise Error.new("hev2_options_init_size: #{N.strerror(rc)}", rc) unless rc == N::OK
      s.bytes.byteslice(Scratch::OPTIONS, L::OPTIONS_SIZE).freeze
    end

    # The defaults with drive = HEV2_DRIVE_WAITER, for the calls with no
    # option (the library only reads it during hev2_connect, so one block,
    # never written again, serves every thread). Never freed.
    WAITER_OPTIONS = begin
      p = Fiddle::Pointer.malloc(L::OPTIONS_SIZE)
      p[0, L::OPTIONS_SIZE] = DEFAULT_OPTIONS
      p[L::OPTIONS[:drive], 4] = [N::DRIVE_WAITER].pack("l")
      p.to_i
    end

    FAMILY = { unspec: Socket::AF_UNSPEC, ipv4: Socket::AF_INET, ipv6: Socket::AF_INET6 }.freeze
    RESOLVER = { nil => N::RESOLVER_DEFAULT, system: N::RESOLVER_SYSTEM, builtin: N::RESOLVER_BUILTIN }.freeze
    INT_MIN = -(2**31)
    INT_MAX = 2**31 - 1
    LOOPBACK_NAME = "localhost"
    LOOPBACK_HOSTS = "localhost:[::1],127.0.0.1"
    private_constant :LOOPBACK_NAME, :LOOPBACK_HOSTS

    module_function

    # Connects to host:port. req is nil for the defaults (then hev2_connect
    # gets NULL options, or WAITER_OPTIONS on the caller's thread), or a
    # Request; its trace, if any, is called with each Hev2::Event of the race
    # once the outcome is known. The winner is wrapped with klass.for_fd.
    def connect(host, port, req = nil, klass = Socket)
      s = Scratch.acquire
      Thread.handle_interrupt(DEFER) do
        waiter = Connector.drive == :waiter && !(Fiber.scheduler && !Fiber.current.blocking?)
        keep = nil
        options = 0
        if req
          host, keep = fill_options(s, req, waiter)
          options = s.address + Scratch::OPTIONS
        elsif waiter
          options = WAITER_OPTIONS
        end
        # r: the winner's fd (decided in one call, the handle released),
        # or a status with a handle at OUT to go on with, or a refusal
        # (OUT is 0). One call without the GVL (NoGVL.connect) when the
        # handle is not needed afterwards and the extension is there; nil
        # when it cannot take the host (hev2_connect explains).
        r = NoGVL.connect(CONNECT_WAIT_ADDRESS, host, s.port_string(port), options, s.address + Scratch::OUT) if
          waiter && !(req && (req.trace || req.trace_files || req.report || req.https_rr))
        if r.nil?
          r = CONNECT.call(Fiddle::Pointer[host].to_i, host.bytesize, s.port_string(port),
                           options, s.address + Scratch::OUT)
          r = N::EAGAIN if r == N::OK # a running handle at OUT, as NoGVL.connect leaves one
        end
        keep&.clear # only now may the strings go: the library has copied them
        return kept(wrap(r, klass)) if r >= 0
        raise call_error(r, host, port) if s.u64(Scratch::OUT).zero?

        conn = s.u64(Scratch::OUT)
        begin
          if waiter
            wait_driving(conn, s, host, port)
          else
            wait(conn, s, host, port)
          end
          write_traces(conn, s, req.trace_files, host, port) if req&.trace_files
          service = Service.read(conn, s) if req&.https_rr
          sock = begin
            if req&.report
              reported(conn, s, host, port, klass, req)
            else
              outcome(conn, s, host, port, req&.trace, klass, req)
            end
          rescue Exception => e # rubocop:disable Lint/RescueException -- re-raised at once
            e.extend(Failure).hev2_service = service if service && !e.frozen?
            raise
          end
          sock.instance_variable_set(:@hev2_service, service) if service
          kept(sock)
        ensure
          RELEASE.call(conn) # cancels if still running; closes what we did not take
        end
      end
    ensure
      Scratch.release(s) if s
    end

    CONNECT_WAIT_ADDRESS = F[:hev2_connect_wait].to_i if NoGVL.available?

    @quick_wait_ms = 1
    @drive = NoGVL.available? ? :waiter : :library
    class << self

      # hev2_wait's first, short wait in ms (0: none; see #wait). A knob
      # for benchmarks and for hosts that want no delay at all on interrupts.
      attr_accessor :quick_wait_ms

      # Who drives Hev2.tcp's races, as hev2_options.drive names it:
      # :waiter (where the extension Hev2::NoGVL is loaded, the default
      # there): the race is played on the calling thread inside hev2_wait
      # (HEV2_DRIVE_WAITER). :library: on the library's thread, the caller
      # waiting on the handle's eventfd (as always under a Fiber
      # scheduler). A knob for tests and benchmarks.
      attr_reader :drive

      def drive=(who)
        raise ArgumentError, "drive must be :waiter or :library, not #{who.inspect}" unless %i[waiter library].include?(who)
        raise ArgumentError, "Hev2::NoGVL is not available (the C extension is not built)" if who == :waiter && !NoGVL.available?

        @drive = who
      end

      # The earlier spelling of drive (true: :waiter, false: :library).
      def caller_thread = drive == :waiter

      def caller_thread=(on)
        self.drive = on ? :waiter : :library
      end
    end

    # Plays a HEV2_DRIVE_WAITER handle on this thread until it is done;
    # hev2_result has then filled s. Interrupts are accepted only inside
    # NoGVL.wait; one that raises leaves from there (the caller releases
    # the handle, which cancels the race); after one that raised nothing
    # (HEV2_EAGAIN) the race goes on where it was.
    def wait_driving(conn, s, host, port)
      loop do
        rc = Thread.handle_interrupt(ALLOW) { NoGVL.wait(WAIT_ADDRESS, conn) }
        break if rc == N::OK
        raise call_error(rc, host, port) unless rc == N::EAGAIN
      end
      rc = RESULT.call(conn, s.address + Scratch::RESULT)
      raise call_error(rc, host, port) unless rc == N::OK
    end

    # Waits until conn is done; hev2_result has then filled s.
    #
    # First up to quick_wait_ms (1) in hev2_wait (without the GVL): a loopback
    # or LAN connect is often done by then, and waiting in the library
    # spares the wake-up through the eventfd, a cross-thread hand-off
    # (bench/bench.rb shows both). Interrupts wait for that millisecond at
    # most. Then, or at once under a Fiber scheduler (whose other fibers
    # must not be held up even for 1 ms), the eventfd wait below; a fiber
    # first asks whether the race is already decided (a loopback connect is
    # settled inside hev2_connect), which spares it the scheduler's round
    # trip through the eventfd.
    def wait(conn, scratch, host, port)
      quick = Connector.quick_wait_ms
      if !quick.positive?
        nil
      elsif Fiber.scheduler && !Fiber.current.blocking?
        rc = RESULT.call(conn, scratch.address + Scratch::RESULT)
        return if rc == N::OK
        raise call_error(rc, host, port) unless rc == N::EAGAIN
      else
        rc = WAIT.call(conn, quick)
        if rc == N::OK
          rc = RESULT.call(conn, scratch.address + Scratch::RESULT)
          return if rc == N::OK
        end
        raise call_error(rc, host, port) unless rc == N::EAGAIN
      end

      fd = EVENTFD.call(conn)
      raise call_error(fd, host, port) if fd.negative?

      io = IO.for_fd(fd) # (no keyword hash: two objects fewer per call)
      io.autoclose = false # the eventfd belongs to the handle
      loop do
        Thread.handle_interrupt(ALLOW) { io.wait_readable }
        rc = RESULT.call(conn, scratch.address + Scratch::RESULT)
        return if rc == N::OK
        raise call_error(rc, host, port) unless rc == N::EAGAIN
      end
    end

    # outcome, with the race's report (read before the handle is released)
    # kept on the socket (Hev2.report_of) or on the exception (#hev2_report).
    def reported(conn, s, host, port, klass, req)
      report = Report.read(conn, s)
      sock = begin
        outcome(conn, s, host, port, req.trace, klass, req)
      rescue Exception => e # rubocop:disable Lint/RescueException -- re-raised at once
        e.extend(Failure).hev2_report = report unless e.frozen?
        raise
      end
      sock.instance_variable_set(:@hev2_report, report)
      sock
    end

    # Turns a done handle's result into a Socket or raises its error.
    def outcome(conn, s, host, port, trace, klass, req = nil)
      base = Scratch::RESULT
      status = s.i32(base + L::RESULT[:status])
      Events.replay(conn, s, s.i32(base + L::RESULT[:n_events]), trace) if trace
      case status
      when N::OK
        wrap(s.i32(base + L::RESULT[:fd]), klass)
      when N::ECONNECT
        errno = s.i32(base + L::RESULT[:error])
        raise Errors.connection(errno.zero? ? Errno::ECONNREFUSED::Errno : errno, host, port, N.errmsg(conn))
      when N::ERESOLVE then raise resolve_error(conn, s, host, port, klass, req)
      when N::ETIMEOUT
        kind = Native::TIMEOUT_KINDS[s.i32(base + L::RESULT[:timeout])] || :open_timeout
        e = Errors.timeout(kind, host, port, klass, req)
        e.extend(Failure).hev2_timeout = kind
        raise e
      else
        raise Error.new("connect to #{Errors.target(host, port)}: #{N.errmsg(conn)}", status)
      end
    end

    # sock, unless an interrupt arrived meanwhile: it is raised when the
    # handle_interrupt block ends, and the socket must not leak to nobody.
    def kept(sock)
      return sock unless Thread.pending_interrupt?

      sock.close
      nil
    end

    # The winner's fd as a klass (Socket, TCPSocket); the fd is ours now:
    # never leaked, whatever goes wrong.
    def wrap(fd, klass)
      klass.for_fd(fd)
    rescue Exception # rubocop:disable Lint/RescueException -- re-raised at once
      begin
        IO.for_fd(fd).close
      rescue SystemCallError
        nil
      end
      raise
    end

    # The last family's resolution error (the library puts the code that
    # wins in .eai); EAI_SYSTEM carries the errno of the resolver thread.
    def resolve_error(conn, s, host, port, klass = Socket, req = nil)
      base = Scratch::RESULT
      eai = s.i32(base + L::RESULT[:eai])
      if req&.local_host && defined?(Socket::EAI_ADDRFAMILY) && eai == Socket::EAI_ADDRFAMILY
        return Errors.local_family(req, host, port, klass)
      end
      errno = 0
      2.times do |i|
        lk = base + L::RESULT[:lookups] + i * L::LOOKUP_SIZE
        if s.i32(lk + L::LOOKUP[:eai]) == eai && errno.zero?
          errno = s.i32(lk + L::LOOKUP[:sys_errno])
        end
      end
      e = Errors.resolution(eai, errno, host, port)
      e.extend(Failure).hev2_eai = eai
      e
    end

    # An error from a call (not from the race) as the exception Ruby users
    # expect for it. It must be built right after the failed call, on the
    # same thread: the message is the library's last error (function and
    # detail), and HEV2_ESYSTEM's errno comes from it (Fiddle.last_error may
    # be stale: a Go export leaves no errno behind).
    #
    # The library's input refusals (its core's rules): a host no resolver
    # could answer (HEV2_EHOST: over 253 bytes) is what getaddrinfo says of
    # it in Ruby, the resolution error EAI_NONAME; a bad port or option is
    # an ArgumentError with the library's reason.
    def call_error(rc, host, port)
      detail, sys_errno = N.last_error
      detail = N.strerror(rc) if detail.empty?
      text = "#{detail} (#{Errors.target(host, port)})"
      case rc
      when N::EHOST then Errors.resolution(Errors::EAI_NONAME, 0, host, port, "hev2: #{detail}")
      when N::EPORT, N::EOPTIONS, N::EINVAL then ArgumentError.new("hev2: #{text}")
      when N::EFORKED
        ForkedError.new("hev2: libhev2 was loaded before fork(); it cannot run in the child " \
                        "(#{Process.pid}). Load it after forking (e.g. in on_worker_boot) " \
                        "or use fork+exec. #{text}", rc)
      when N::ESYSTEM then SystemCallError.new("hev2: #{text}", sys_errno.zero? ? Errno::EIO::Errno : sys_errno)
      else Error.new("hev2: #{text}", rc)
      end
    end

    # Writes req into s's hev2_options. Returns the host to connect to and
    # the C strings whose addresses went into the struct (kept alive by the
    # caller until hev2_connect has copied them).
    def fill_options(s, req, waiter = false)
      o = Scratch::OPTIONS
      s.copy(o, DEFAULT_OPTIONS)
      s.put_i32(o + L::OPTIONS[:drive], waiter ? N::DRIVE_WAITER : N::DRIVE_LIBRARY)
      # the plain options (generated from include/hev2.h's notes)
      PlainOptions.fill(s, o, req)
      put = ->(field, v) { s.put_i32(o + L::OPTIONS[field], v) }
      put.(:family, FAMILY.fetch(req.family))
      put.(:local_port, c_int(req.local_port))
      put.(:resolver, RESOLVER.fetch(req.resolver))
      put.(:record_events, req.trace || req.trace_files || req.report ? 1 : 0)

      host = req.host
      statics = nil
      if host.nil?
        host = LOOPBACK_NAME
        statics = LOOPBACK_HOSTS
      elsif req.addresses
        statics = "#{host}:#{req.addresses.map { |a| a.include?(":") ? "[#{a}]" : a }.join(",")}"
      end
      keep = []
      # The strings are copied to malloc'd memory: a Ruby string's bytes
      # could be moved by GC.compact in another thread while hev2_connect
      # runs without the GVL. Freed by GC once `keep` is dropped.
      pointer = lambda do |field, str|
        return unless str
        c = Fiddle::Pointer.malloc(str.bytesize + 1, Fiddle::RUBY_FREE)
        c[0, str.bytesize] = str
        c[str.bytesize] = 0
        keep << c
        s.put_u64(o + L::OPTIONS[field], c.to_i)
      end
      pointer.(:local_host, req.local_host)
      pointer.(:nameservers, req.nameservers&.join(","))
      pointer.(:static_hosts, statics)
      pointer.(:alpn, req.alpn&.join(","))
      [host, keep]
    end

    # Writes a done handle's race to each [format, path] with
    # hev2_write_trace: the library renders the file (one renderer for
    # every language). A failure raises what call_error makes of it
    # (SystemCallError for a file that cannot be written).
    # hev2_result has handed a winner's fd over already (s holds it): when a
    # file cannot be written, that fd is closed here before the error
    # propagates, so nothing leaks.
    def write_traces(conn, s, files, host, port)
      files.each do |format, path|
        c = Fiddle::Pointer.malloc(path.bytesize + 1, Fiddle::RUBY_FREE)
        c[0, path.bytesize] = path
        c[path.bytesize] = 0
        rc = WRITE_TRACE.call(conn, format, -1, c.to_i)
        raise call_error(rc, host, port) unless rc == N::OK
      end
    rescue Exception # whatever is raised (an interrupt too), the fd must not leak
      if s.i32(Scratch::RESULT + L::RESULT[:status]) == N::OK
        begin
          IO.for_fd(s.i32(Scratch::RESULT + L::RESULT[:fd])).close
        rescue SystemCallError
          nil
        end
      end
      raise
    end

    # Seconds to the ABI's milliseconds (the conversion of every plain
    # option in seconds, delays included: nil is 0, the ABI's default or
    # "none"). A timeout of 0 means "no time at all" in Ruby but "none" in
    # the ABI: it becomes 1 ms. Fractions round
    # away from 0, so a negative value stays negative (the library refuses
    # it), and the result is saturated into a C int, so a value too large
    # stays too large instead of wrapping around.
    def timeout_ms(seconds)
      return 0 if seconds.nil?
      return seconds.positive? ? INT_MAX : INT_MIN if seconds.respond_to?(:infinite?) && seconds.infinite?

      ms = (seconds * 1000).ceil
      ms = seconds.negative? ? [ms, -1].min : [ms, 1].max
      c_int(ms)
    end

    # An Integer saturated into a C int (see timeout_ms).
    def c_int(n)
      n.clamp(INT_MIN, INT_MAX)
    end
  end
end
