/*
 * GuavaScript drives the real Guava RateLimiter (Debian's libguava-java, Guava 31.1) on a
 * scripted clock, for limiters/peers/guava_java_test.go. It lives in Guava's own package because the
 * hooks Guava's tests use are package-private there: RateLimiter.create(double,
 * SleepingStopwatch), RateLimiter.create(double, long, TimeUnit, double coldFactor,
 * SleepingStopwatch), the SmoothBursty(SleepingStopwatch, double maxBurstSeconds)
 * constructor, SmoothRateLimiter.storedPermits and queryEarliestAvailable.
 *
 * It reads lines on stdin and answers each on stdout:
 *
 *   bursty PERMITS WINDOW_NS MAX_BURST_NS        a new SmoothBursty: "made"
 *   warmup PERMITS WINDOW_NS WARMUP_US COLD      a new SmoothWarmingUp: "made"
 *   try US N TIMEOUT_NS                          tryAcquire(N, TIMEOUT_NS, NANOSECONDS) at US
 *   acquire US N                                 acquire(N) at US
 *
 * A call answers "DECISION WAIT STORED NEXT": 1 admitted or 0 refused; the µs the limiter
 * asked its stopwatch to sleep (-1 when it did not ask); storedPermits as the hex of its
 * IEEE 754 bits; and the next free ticket in µs. permitsPerSecond is PERMITS × 1e9 /
 * WINDOW_NS, one correctly rounded division, as is maxBurstSeconds = MAX_BURST_NS / 1e9.
 * The clock never moves by itself: a sleep is recorded, not taken, so each call is an
 * independent caller at the time the script gives it. Any error ends the run with status 1.
 */
package com.google.common.util.concurrent;

import java.io.BufferedReader;
import java.io.BufferedWriter;
import java.io.InputStreamReader;
import java.io.OutputStreamWriter;
import java.io.PrintWriter;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.TimeUnit;

public final class GuavaScript {
  /** A stopwatch that reads the script's time and records the sleeps it is asked for. */
  static final class ScriptedStopwatch extends RateLimiter.SleepingStopwatch {
    long nowMicros;
    long sleptMicros = -1;

    @Override
    protected long readMicros() {
      return nowMicros;
    }

    @Override
    protected void sleepMicrosUninterruptibly(long micros) {
      sleptMicros = micros;
    }
  }

  /** PERMITS × 1e9 / WINDOW_NS, refused where PERMITS × 1e9 is not an exact double. */
  static double perSecond(long permits, long windowNanos) {
    if (permits <= 0 || permits > (1L << 53) / 1_000_000_000L || windowNanos <= 0) {
      throw new IllegalArgumentException("rate " + permits + " per " + windowNanos + "ns is out of range");
    }
    return (double) (permits * 1_000_000_000L) / (double) windowNanos;
  }

  public static void main(String[] args) throws Exception {
    BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
    PrintWriter out =
        new PrintWriter(new BufferedWriter(new OutputStreamWriter(System.out, StandardCharsets.UTF_8), 1 << 16));
    ScriptedStopwatch clock = null;
    SmoothRateLimiter limiter = null;
    int lineNumber = 0;
    String line;
    try {
      while ((line = in.readLine()) != null) {
        lineNumber++;
        String[] f = line.trim().split("\\s+");
        switch (f[0]) {
          case "bursty": {
            clock = new ScriptedStopwatch();
            long maxBurstNanos = Long.parseLong(f[3]);
            double pps = perSecond(Long.parseLong(f[1]), Long.parseLong(f[2]));
            if (maxBurstNanos == 1_000_000_000L) {
              limiter = (SmoothRateLimiter) RateLimiter.create(pps, clock); // RateLimiter.create(pps)
            } else {
              limiter = new SmoothRateLimiter.SmoothBursty(clock, (double) maxBurstNanos / 1e9);
              limiter.setRate(pps);
            }
            out.println("made");
            break;
          }
          case "warmup": {
            clock = new ScriptedStopwatch();
            double pps = perSecond(Long.parseLong(f[1]), Long.parseLong(f[2]));
            limiter = (SmoothRateLimiter)
                RateLimiter.create(pps, Long.parseLong(f[3]), TimeUnit.MICROSECONDS, Double.parseDouble(f[4]), clock);
            out.println("made");
            break;
          }
          case "try":
          case "acquire": {
            if (limiter == null) {
              throw new IllegalStateException("a call before any limiter");
            }
            clock.nowMicros = Long.parseLong(f[1]);
            clock.sleptMicros = -1;
            int permits = Integer.parseInt(f[2]);
            boolean admitted = true;
            if (f[0].equals("try")) {
              admitted = limiter.tryAcquire(permits, Long.parseLong(f[3]), TimeUnit.NANOSECONDS);
            } else {
              limiter.acquire(permits);
            }
            out.println((admitted ? "1 " : "0 ") + clock.sleptMicros + " "
                + Long.toHexString(Double.doubleToRawLongBits(limiter.storedPermits)) + " "
                + limiter.queryEarliestAvailable(clock.nowMicros));
            break;
          }
          default:
            throw new IllegalArgumentException("unknown command " + f[0]);
        }
      }
    } catch (RuntimeException e) {
      out.flush();
      System.err.println("stdin:" + lineNumber + ": " + e);
      System.exit(1);
    }
    out.flush();
  }
}
