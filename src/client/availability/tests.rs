use super::*;
use crate::base::dist::{Kind, Num};
use crate::engine::rng::stream;
use crate::streams::StreamKind;
use std::path::Path;

const H: Time = 3600;
const DAY: Time = 86_400;

fn rng(id: u64) -> SimRng {
    stream(7, StreamKind::Host, id)
}

fn process(on_frac: f64, lambda: f64) -> AvailSpec {
    AvailSpec {
        on_off: OnOff::Process { on_frac, lambda },
        ..AvailSpec::default()
    }
}

fn trace_spec(intervals: Vec<Vec<(Time, Time)>>) -> AvailSpec {
    AvailSpec {
        on_off: OnOff::Trace(Arc::new(Trace::from_intervals(intervals).unwrap())),
        ..AvailSpec::default()
    }
}

/// A state after a change: (time, on, computing, connected).
type Step = (Time, bool, bool, bool);

/// Steps a host from toggle to toggle until `end`, returning the (time, on,
/// computing, connected) after each change and the total on, computing and
/// connected seconds.
fn run(
    spec: &AvailSpec,
    slot: u32,
    start: Time,
    end: Time,
    rng: &mut SimRng,
) -> (Vec<Step>, [Time; 3]) {
    let mut a = Availability::new(spec, slot, start, rng);
    let mut log = vec![(start, a.is_on(), a.computing(), a.connected())];
    let mut totals = [0; 3];
    let mut t = start;
    loop {
        let next = a.next_change().min(end);
        let dt = next - t;
        totals[0] += dt * a.is_on() as Time;
        totals[1] += dt * a.computing() as Time;
        totals[2] += dt * a.connected() as Time;
        if next >= end {
            break;
        }
        a.update(next, spec, rng);
        log.push((next, a.is_on(), a.computing(), a.connected()));
        t = next;
    }
    (log, totals)
}

#[test]
fn always_never_changes_and_draws_nothing() {
    let spec = AvailSpec {
        active: (1.0, 100.0),
        connected: (2.0, 100.0),
        ..AvailSpec::default()
    };
    assert!(spec.is_always());
    let mut r = rng(1);
    let before = r.clone();
    let mut a = Availability::new(&spec, 3, 500, &mut r);
    assert_eq!(a.next_change(), Time::MAX);
    for t in [501, 10_000, 1_000_000_000] {
        a.update(t, &spec, &mut r);
        assert!(a.is_on() && a.computing() && a.connected());
        assert_eq!(a.next_change(), Time::MAX);
    }
    let ts = a.time_stats();
    assert_eq!(
        (ts.on_frac, ts.active_frac, ts.connected_frac),
        (1.0, 1.0, 1.0)
    );
    assert_eq!(r, before, "no random number consumed");

    // The default state is the same: always on, fractions 1.
    let mut d = Availability::default();
    d.update(1_000_000, &process(0.5, 100.0), &mut r);
    assert!(d.is_on() && d.computing() && d.connected());
    assert_eq!(d.next_change(), Time::MAX);
    assert_eq!(d.time_stats().on_frac, 1.0);
    assert_eq!(r, before);
}

#[test]
fn random_process_long_run_fraction() {
    for (frac, lambda) in [(0.3, 3600.0), (0.8, 7200.0)] {
        let spec = process(frac, lambda);
        let mut r = rng(2);
        let horizon = (lambda / frac * 100_000.0) as Time;
        let (log, totals) = run(&spec, 0, 0, horizon, &mut r);
        let f = totals[0] as f64 / horizon as f64;
        assert!((f - frac).abs() < 0.01 * frac, "frac {frac}: got {f}");
        // Always active and connected: computing and connected follow on.
        assert_eq!(totals[0], totals[1]);
        assert_eq!(totals[0], totals[2]);
        // Strict alternation.
        assert!(log.windows(2).all(|w| w[0].1 != w[1].1));
    }
}

#[test]
fn random_process_active_and_connected_fractions() {
    let spec = AvailSpec {
        on_off: OnOff::Process {
            on_frac: 0.5,
            lambda: 3600.0,
        },
        active: (0.6, 1800.0),
        connected: (0.25, 900.0),
        ..AvailSpec::default()
    };
    let mut r = rng(3);
    let horizon = 400_000 * 3600;
    let (_, [on, comp, conn]) = run(&spec, 0, 0, horizon, &mut r);
    let on_f = on as f64 / horizon as f64;
    assert!((on_f - 0.5).abs() < 0.005, "{on_f}");
    let act = comp as f64 / on as f64;
    assert!((act - 0.6).abs() < 0.006, "{act}");
    let con = conn as f64 / on as f64;
    assert!((con - 0.25).abs() < 0.0025, "{con}");
}

#[test]
fn random_process_frac_one_never_toggles() {
    let spec = process(1.0, 3600.0);
    let mut r = rng(4);
    let before = r.clone();
    let mut a = Availability::new(&spec, 0, 0, &mut r);
    assert_eq!(a.next_change(), Time::MAX);
    a.update(100 * DAY, &spec, &mut r);
    assert!(a.is_on());
    assert_eq!(r, before);
    // frac 0: always off, no draws either.
    let spec = process(0.0, 3600.0);
    let mut a = Availability::new(&spec, 0, 0, &mut r);
    assert!(!a.is_on() && !a.computing() && !a.connected());
    assert_eq!(a.next_change(), Time::MAX);
    a.update(100 * DAY, &spec, &mut r);
    assert_eq!(r, before);
    assert!((a.time_stats().on_frac - 0.0).abs() < 1e-12);
}

#[test]
fn periods_fixed_alternate_exactly() {
    let spec = AvailSpec {
        on_off: OnOff::Periods {
            on: Dist::fixed((8 * H) as f64),
            off: Dist::fixed((16 * H) as f64),
        },
        ..AvailSpec::default()
    };
    let mut starts_on = 0;
    for id in 0..600 {
        let mut r = rng(100 + id);
        let (log, _) = run(&spec, 0, 1000, 1000 + 30 * DAY, &mut r);
        starts_on += log[0].1 as u32;
        let first = log[1].0 - log[0].0;
        let full = if log[0].1 { 8 * H } else { 16 * H };
        assert!((1..=full).contains(&first), "first period {first}");
        for w in log[1..].windows(2) {
            assert_ne!(w[0].1, w[1].1);
            let len = w[1].0 - w[0].0;
            assert_eq!(len, if w[0].1 { 8 * H } else { 16 * H });
        }
        assert!(log.len() > 55);
    }
    // On at the start with probability 8/24.
    let p = starts_on as f64 / 600.0;
    assert!((p - 1.0 / 3.0).abs() < 0.07, "{p}");
}

#[test]
fn periods_random_long_run_fraction_and_rounding() {
    let spec = AvailSpec {
        on_off: OnOff::Periods {
            on: Dist {
                kind: Kind::Exponential { mean: Num(1000.5) },
                min: None,
                max: None,
            },
            off: Dist {
                kind: Kind::Uniform {
                    min: Num(0.0),
                    max: Num(3000.0),
                },
                min: None,
                max: None,
            },
        },
        ..AvailSpec::default()
    };
    let mut r = rng(5);
    let horizon = 300_000_000;
    let (log, [on, ..]) = run(&spec, 0, 0, horizon, &mut r);
    // Periods are whole seconds >= 1: ceil adds half a second on average.
    let f = on as f64 / horizon as f64;
    assert!((f - 1001.0 / 2502.0).abs() < 0.004, "{f}");
    assert!(log.windows(2).all(|w| w[1].0 > w[0].0));
    assert!((spec.expected_on_frac(0, 0) - 1000.5 / 2500.5).abs() < 1e-12);
}

#[test]
fn trace_replays_exactly() {
    let spec = trace_spec(vec![vec![(100, 200), (300, 400)], vec![(0, 50)]]);
    let mut r = rng(6);
    let before = r.clone();
    let mut a = Availability::new(&spec, 0, 0, &mut r);
    assert!(!a.is_on());
    assert_eq!(a.next_change(), 100);
    a.update(99, &spec, &mut r);
    assert!(!a.is_on());
    a.update(100, &spec, &mut r);
    assert!(a.is_on() && a.computing() && a.connected());
    assert_eq!(a.next_change(), 200);
    a.update(199, &spec, &mut r);
    assert!(a.is_on());
    a.update(200, &spec, &mut r);
    assert!(!a.is_on());
    assert_eq!(a.next_change(), 300);
    // Skipping over a whole interval.
    a.update(450, &spec, &mut r);
    assert!(!a.is_on());
    assert_eq!(a.next_change(), Time::MAX);
    a.update(10_000, &spec, &mut r);
    assert!(!a.is_on());

    // Joining mid-interval, at an end, before a start.
    let a = Availability::new(&spec, 0, 150, &mut r);
    assert!(a.is_on());
    assert_eq!(a.next_change(), 200);
    let a = Availability::new(&spec, 0, 200, &mut r);
    assert!(!a.is_on());
    assert_eq!(a.next_change(), 300);
    let a = Availability::new(&spec, 0, 400, &mut r);
    assert!(!a.is_on());
    assert_eq!(a.next_change(), Time::MAX);
    assert_eq!(r, before, "trace replay draws nothing");
}

#[test]
fn trace_slots_map_modulo() {
    let spec = trace_spec(vec![vec![(0, 10)], vec![(20, 30)], vec![(40, 50)]]);
    let mut r = rng(8);
    for slot in 0..9u32 {
        let (log, [on, ..]) = run(&spec, slot, 0, 100, &mut r);
        let k = (slot % 3) as Time;
        assert_eq!(on, 10);
        let expect: Vec<_> = if k == 0 {
            vec![(0, true), (10, false)]
        } else {
            vec![(0, false), (20 * k, true), (20 * k + 10, false)]
        };
        let got: Vec<_> = log.iter().map(|&(t, on, _, _)| (t, on)).collect();
        assert_eq!(got, expect, "slot {slot}");
    }
    let OnOff::Trace(t) = &spec.on_off else {
        unreachable!()
    };
    assert_eq!(t.hosts(), 3);
    assert_eq!(t.host_for_slot(7), 1);
    assert!((t.on_fraction() - 0.2).abs() < 1e-12);
}

#[test]
fn trace_active_process_still_random() {
    let mut spec = trace_spec(vec![vec![(0, 100 * DAY)]]);
    spec.active = (0.5, 3600.0);
    let mut r = rng(9);
    let (_, [on, comp, _]) = run(&spec, 0, 0, 100 * DAY, &mut r);
    assert_eq!(on, 100 * DAY);
    let f = comp as f64 / on as f64;
    assert!((f - 0.5).abs() < 0.05, "{f}");
}

#[test]
fn trace_parsing() {
    let t = Trace::from_csv(
        "t.csv",
        "host_id,start,end\n# a comment\nb,1d,2d\na,0,100\nb, 172800 , 3d\na,200,300\n",
    )
    .unwrap();
    assert_eq!(t.hosts(), 2);
    assert_eq!(t.host_id(0), "b");
    assert_eq!(t.host_id(1), "a");
    // Touching intervals merge.
    assert_eq!(t.intervals(0), &[(86_400, 259_200)]);
    assert_eq!(t.intervals(1), &[(0, 100), (200, 300)]);
    assert_eq!(t.horizon(), 259_200);
    // Column order is free.
    let t = Trace::from_csv("t.csv", "start,end,host_id\n5,9,x\n").unwrap();
    assert_eq!(t.intervals(0), &[(5, 9)]);
    // The example of docs/availability.md.
    let t = Trace::from_csv(
        "t.csv",
        "host_id,start,end\noffice-1,26760,64260\noffice-1,116700,151800\n\
         server-1,0,308640\nlaptop-1,2d,50h\n",
    )
    .unwrap();
    assert_eq!(t.hosts(), 3);
    assert_eq!(t.intervals(2), &[(172_800, 180_000)]);
}

#[test]
fn trace_load_errors() {
    let e = |text: &str| Trace::from_csv("bad.csv", text).unwrap_err().to_string();
    let m = e("host_id,start,end\na,0,100\na,1x0,200\n");
    assert!(
        m.contains("bad.csv") && m.contains("line 3") && m.contains("bad start"),
        "{m}"
    );
    let m = e("host_id,start,end\na,0,abc\n");
    assert!(m.contains("line 2") && m.contains("bad end"), "{m}");
    let m = e("host_id,start,end\na,0,100\na,200,200\n");
    assert!(
        m.contains("line 3") && m.contains("must be after start"),
        "{m}"
    );
    let m = e("host_id,start,end\na,0,100\nb,0,100\na,50,150\n");
    assert!(
        m.contains("line 4") && m.contains("overlaps") && m.contains("line 2"),
        "{m}"
    );
    let m = e("host_id,start,end\na,100,200\na,0,50\n");
    assert!(m.contains("line 3") && m.contains("not sorted"), "{m}");
    let m = e("a,0,100\n");
    assert!(m.contains("line 1") && m.contains("missing header"), "{m}");
    let m = e("host_id,start,end\na,-5,100\n");
    assert!(m.contains("line 2") && m.contains("negative"), "{m}");
    let m = e("host_id,start,end\n");
    assert!(m.contains("no intervals"), "{m}");
    let m = e("host_id,start,end\na,0\n");
    assert!(
        m.contains("line 2") && m.contains("missing field `end`"),
        "{m}"
    );
    let m = Trace::read(Path::new("/nonexistent/x.csv"))
        .unwrap_err()
        .to_string();
    assert!(m.contains("/nonexistent/x.csv"), "{m}");
}

#[test]
fn shipped_synthetic_trace_loads() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("scenarios/traces/synthetic.csv");
    let t = Trace::read(&path).unwrap();
    assert_eq!(t.hosts(), 8);
    assert!(t.horizon() <= 30 * DAY);
    let f = t.on_fraction();
    assert!((0.2..0.9).contains(&f), "{f}");
    for k in 0..t.hosts() {
        assert!(!t.intervals(k).is_empty());
    }
}

#[test]
fn ema_constant_on_for_alpha() {
    let spec = AvailSpec::default();
    let mut r = rng(10);
    let mut a = Availability::new(&spec, 0, 0, &mut r);
    a.set_time_stats(TimeStats {
        on_frac: 0.5,
        active_frac: 0.5,
        connected_frac: 0.5,
    });
    a.update(864_000, &spec, &mut r);
    // The last update is at 78545·11 = 863995 s.
    let want = 1.0 - 0.5 * (-863_995.0f64 / 864_000.0).exp();
    let ts = a.time_stats();
    assert!((ts.on_frac - want).abs() < 1e-14);
    assert!((ts.active_frac - want).abs() < 1e-14);
    assert!((ts.connected_frac - want).abs() < 1e-14);
}

/// Off for 2 days, then on again: while off nothing moves; at the restart the modern
/// client decays only `on_frac` by `w2 = exp(-2·86400/864000)`, the seed client all
/// three by `exp(-2·86400/2592000)` (spec client §3.5, §1.11).
#[test]
fn restart_decays_over_the_gap_by_policy() {
    let init = TimeStats {
        on_frac: 1.0,
        active_frac: 0.7,
        connected_frac: 0.4,
    };
    for (rule, all) in [(TimeStatsRule::MODERN, false), (TimeStatsRule::SEED, true)] {
        let mut spec = trace_spec(vec![vec![(2 * DAY, 3 * DAY)]]);
        spec.time_stats = rule;
        let mut r = rng(11);
        let mut a = Availability::new(&spec, 0, 0, &mut r);
        a.set_time_stats(init);
        a.update(DAY, &spec, &mut r);
        assert_eq!(a.time_stats(), init, "frozen while off");
        a.update(2 * DAY, &spec, &mut r);
        let w2 = (-(2.0 * DAY as f64) / rule.alpha).exp();
        let ts = a.time_stats();
        assert!((ts.on_frac - w2).abs() < 1e-14);
        let (af, cf) = if all {
            (0.7 * w2, 0.4 * w2)
        } else {
            (0.7, 0.4)
        };
        assert!((ts.active_frac - af).abs() < 1e-14, "{ts:?}");
        assert!((ts.connected_frac - cf).abs() < 1e-14, "{ts:?}");
    }
}

/// A gap of exactly 14 days still decays; one second more leaves the averages
/// unchanged (`dt > 14 days` → `dt = 0`, spec client §3.5).
#[test]
fn restart_after_more_than_14_days_leaves_the_averages() {
    for (gap, decays) in [(MAX_GAP, true), (MAX_GAP + 1, false)] {
        let spec = trace_spec(vec![vec![(gap, gap + DAY)]]);
        let mut r = rng(11);
        let mut a = Availability::new(&spec, 0, 0, &mut r);
        a.set_time_stats(TimeStats {
            on_frac: 0.5,
            active_frac: 0.5,
            connected_frac: 0.5,
        });
        a.update(gap, &spec, &mut r);
        let want = if decays { 0.5 * (-1.4f64).exp() } else { 0.5 };
        assert!((a.time_stats().on_frac - want).abs() < 1e-14, "gap {gap}");
        // Then on for a day: the ordinary EMA towards 1, updated every 11 s (the last
        // update 7854·11 = 86394 s after the restart).
        a.update(gap + DAY, &spec, &mut r);
        let w2 = (-86_394.0f64 / 864_000.0).exp();
        let want = want * w2 + (1.0 - w2);
        assert!((a.time_stats().on_frac - want).abs() < 1e-14, "gap {gap}");
    }
}

/// `CLIENT_TIME_STATS::update` returns when `dt <= 10` s: the statistics move every
/// 11 s from the join, with the states of the update's own second; an off period of
/// 10 s or less is no restart (spec client §3.5).
#[test]
fn updates_every_eleven_seconds() {
    let spec = trace_spec(vec![vec![(0, 100), (108, 1000)]]);
    let mut r = rng(12);
    let mut a = Availability::new(&spec, 0, 0, &mut r);
    let init = TimeStats {
        on_frac: 0.5,
        active_frac: 0.5,
        connected_frac: 0.5,
    };
    a.set_time_stats(init);
    a.update(10, &spec, &mut r);
    assert_eq!(a.time_stats(), init, "dt <= 10: no update");
    a.update(11, &spec, &mut r);
    let ema = |f: f64, dt: f64| {
        let w2 = (-dt / 864_000.0).exp();
        f * w2 + (1.0 - w2)
    };
    assert!((a.time_stats().on_frac - ema(0.5, 11.0)).abs() < 1e-15);
    // Off at 100: updates at 22, ..., 99 (9·11); back at 108, 9 s after the last
    // update: no restart decay, and the updates go on at 110, 121, ...
    a.update(109, &spec, &mut r);
    let f99 = ema(0.5, 99.0);
    assert!((a.time_stats().on_frac - f99).abs() < 1e-15);
    a.update(110, &spec, &mut r);
    assert!((a.time_stats().on_frac - ema(f99, 11.0)).abs() < 1e-15);
}

#[test]
fn ema_many_short_intervals_equal_one_long() {
    // Constant state: one update vs. one per 37 s.
    let spec = AvailSpec::default();
    let mut r = rng(12);
    let init = TimeStats {
        on_frac: 0.2,
        active_frac: 0.3,
        connected_frac: 0.9,
    };
    let mut one = Availability::new(&spec, 0, 0, &mut r);
    one.set_time_stats(init);
    let mut many = one.clone();
    let end = 20 * DAY;
    one.update(end, &spec, &mut r);
    let mut t = 0;
    while t < end {
        t = (t + 37).min(end);
        many.update(t, &spec, &mut r);
    }
    let (a, b) = (one.time_stats(), many.time_stats());
    assert!((a.on_frac - b.on_frac).abs() < 1e-12);
    assert!((a.active_frac - b.active_frac).abs() < 1e-12);
    assert!((a.connected_frac - b.connected_frac).abs() < 1e-12);

    // With toggles: updating every 100 s or only at the end gives the same states,
    // the same draws and the same statistics.
    let spec = AvailSpec {
        on_off: OnOff::Process {
            on_frac: 0.7,
            lambda: 5000.0,
        },
        active: (0.5, 2000.0),
        connected: (0.9, 8000.0),
        time_stats: TimeStatsRule::MODERN,
        ..AvailSpec::default()
    };
    let (mut r1, mut r2) = (rng(13), rng(13));
    let mut one = Availability::new(&spec, 0, 0, &mut r1);
    let mut many = Availability::new(&spec, 0, 0, &mut r2);
    let end = 30 * DAY;
    one.update(end, &spec, &mut r1);
    let mut t = 0;
    while t < end {
        t = (t + 100).min(end);
        many.update(t, &spec, &mut r2);
    }
    assert_eq!(r1, r2);
    assert_eq!((one.state, one.next), (many.state, many.next));
    let (a, b) = (one.time_stats(), many.time_stats());
    assert!((a.on_frac - b.on_frac).abs() < 1e-12);
    assert!((a.active_frac - b.active_frac).abs() < 1e-12);
    assert!((a.connected_frac - b.connected_frac).abs() < 1e-12);
}

#[test]
fn ema_tracks_the_long_run_fractions() {
    let spec = AvailSpec {
        on_off: OnOff::Process {
            on_frac: 0.6,
            lambda: 3600.0,
        },
        active: (0.5, 3600.0),
        connected: (0.8, 3600.0),
        time_stats: TimeStatsRule::MODERN,
        ..AvailSpec::default()
    };
    let mut r = rng(14);
    let mut a = Availability::new(&spec, 0, 0, &mut r);
    let ts = a.time_stats();
    assert_eq!(
        (ts.on_frac, ts.active_frac, ts.connected_frac),
        (0.6, 0.5, 0.8)
    );
    a.update(200 * DAY, &spec, &mut r);
    let ts = a.time_stats();
    assert!((ts.on_frac - 0.6).abs() < 0.1, "{ts:?}");
    assert!((ts.active_frac - 0.5).abs() < 0.1, "{ts:?}");
    assert!((ts.connected_frac - 0.8).abs() < 0.1, "{ts:?}");
}

#[test]
fn same_seed_same_sequence() {
    let spec = AvailSpec {
        on_off: OnOff::Process {
            on_frac: 0.6,
            lambda: 3600.0,
        },
        active: (0.7, 1800.0),
        connected: (0.9, 7200.0),
        time_stats: TimeStatsRule::MODERN,
        ..AvailSpec::default()
    };
    let (l1, _) = run(&spec, 0, 10, 20 * DAY, &mut rng(15));
    let (l2, _) = run(&spec, 0, 10, 20 * DAY, &mut rng(15));
    let (l3, _) = run(&spec, 0, 10, 20 * DAY, &mut rng(16));
    assert_eq!(l1, l2);
    assert_ne!(l1, l3);
    assert!(l1.len() > 100);
}

#[test]
fn next_change_ignores_toggles_while_off() {
    let mut spec = trace_spec(vec![vec![(1000, 2000)]]);
    spec.active = (0.5, 10.0);
    let mut r = rng(17);
    let mut a = Availability::new(&spec, 0, 0, &mut r);
    assert_eq!(a.next_change(), 1000);
    a.update(1000, &spec, &mut r);
    assert!(a.is_on());
    assert!((1001..=2000).contains(&a.next_change()));
}

// ----- daily and weekly patterns, vacations, mixtures, per-host fractions ---------

const HOUR: Time = 3600;

/// A daily pattern: weekdays `start`–`end` (hours), the weekend's window the same,
/// no jitter, UTC offset `tz` hours.
fn daily(start: Time, end: Time, wd: f64, we: f64, tz: f64) -> Daily {
    let w = Window {
        start: start * HOUR,
        end: end * HOUR,
    };
    Daily {
        weekday: w,
        weekend: w,
        weekday_prob: wd,
        weekend_prob: we,
        jitter: None,
        zone: Zone::Hours(crate::base::dist::Dist::fixed(tz)),
    }
}

fn daily_spec(d: Daily) -> AvailSpec {
    AvailSpec {
        on_off: OnOff::Daily(Box::new(d)),
        ..AvailSpec::default()
    }
}

fn dist(s: &str) -> crate::base::dist::Dist {
    #[derive(serde::Deserialize)]
    struct T {
        x: crate::base::dist::Dist,
    }
    toml::from_str::<T>(&format!("x = {s}")).unwrap().x
}

#[test]
fn office_hours_on_weekdays_only() {
    // 09:00–17:30 on weekdays, never at weekends, UTC: day 0 is a Monday.
    let mut d = daily(9, 17, 1.0, 0.0, 0.0);
    d.weekday.end = 17 * HOUR + 1800;
    d.weekend = d.weekday;
    let spec = daily_spec(d);
    let (log, totals) = run(&spec, 0, 0, 14 * DAY, &mut rng(20));
    let mut want = vec![(0, false, false, false)];
    for week in 0..2 {
        for day in 0..5 {
            let base = (week * 7 + day) * DAY;
            want.push((base + 9 * HOUR, true, true, true));
            want.push((base + 17 * HOUR + 1800, false, false, false));
        }
    }
    assert_eq!(log, want);
    assert_eq!(totals[0], 10 * (8 * HOUR + 1800));
    // The week's on fraction: 5 · 8.5 h / 168 h.
    assert!((spec.expected_on_frac(0, 0) - 42.5 / 168.0).abs() < 1e-12);
    assert_eq!(
        spec.expected_time_stats(0, &spec.draw_traits(&mut rng(0)))
            .on_frac,
        42.5 / 168.0
    );
}

#[test]
fn time_zones_shift_the_local_day() {
    // UTC+1: 09:00 local is 08:00 UTC.
    let spec = daily_spec(daily(9, 17, 1.0, 0.0, 1.0));
    let a = Availability::new(&spec, 0, 0, &mut rng(21));
    assert!(!a.is_on());
    assert_eq!(a.next_change(), 8 * HOUR);
    // UTC−5: at t = 0 it is Sunday 19:00 locally, and weekends are off; Monday
    // 09:00 local is 14:00 UTC.
    let spec = daily_spec(daily(9, 17, 1.0, 0.0, -5.0));
    let a = Availability::new(&spec, 0, 0, &mut rng(21));
    assert!(!a.is_on());
    assert_eq!(a.next_change(), 14 * HOUR);
    // UTC+9 on Friday at 20:00 UTC: Saturday 05:00 local; next on Monday 09:00
    // local = Monday 00:00 UTC of week 1.
    let spec = daily_spec(daily(9, 17, 1.0, 0.0, 9.0));
    let a = Availability::new(&spec, 0, 4 * DAY + 20 * HOUR, &mut rng(21));
    assert!(!a.is_on());
    assert_eq!(a.next_change(), 7 * DAY);
    // A weighted list of zones: a host takes zone k with its weight's share.
    let d = Daily {
        zone: Zone::Weighted(vec![(-5.0, 0.25), (1.0, 1.0)].into()),
        ..daily(9, 17, 1.0, 1.0, 0.0)
    };
    let mut r = rng(22);
    let west = (0..4000)
        .filter(|_| d.draw_offset(&mut r) == -5 * 3600)
        .count();
    assert!((west as f64 / 4000.0 - 0.25).abs() < 0.03, "{west}");
}

/// A host's own UTC offset (a host export's `timezone`) replaces the model's zone:
/// 09:00 local at UTC+5:30 is 03:30 UTC, whatever zone the model would draw.
#[test]
fn a_hosts_own_offset_replaces_the_drawn_zone() {
    let spec = daily_spec(daily(9, 17, 1.0, 0.0, -5.0));
    let traits = HostTraits {
        utc_offset: Some(5 * 3600 + 1800),
        ..spec.typical_traits()
    };
    let a = Availability::join(&spec, traits, 0, 0, &mut rng(21));
    assert!(!a.is_on());
    assert_eq!(a.next_change(), 3 * HOUR + 1800);
    // Without one, the model's UTC−5: Monday 09:00 local is 14:00 UTC.
    let a = Availability::join(&spec, spec.typical_traits(), 0, 0, &mut rng(21));
    assert_eq!(a.next_change(), 14 * HOUR);
}

#[test]
fn a_night_window_runs_past_midnight() {
    // 22:00–07:00 every day: at Monday 00:00 the host is in Sunday's night.
    let spec = daily_spec(daily(22, 7, 1.0, 1.0, 0.0));
    let (log, totals) = run(&spec, 0, 0, 2 * DAY, &mut rng(23));
    assert_eq!(
        log,
        vec![
            (0, true, true, true),
            (7 * HOUR, false, false, false),
            (22 * HOUR, true, true, true),
            (DAY + 7 * HOUR, false, false, false),
            (DAY + 22 * HOUR, true, true, true),
        ]
    );
    assert_eq!(totals[0], 7 * HOUR + 9 * HOUR + 2 * HOUR);
    assert!((spec.expected_on_frac(0, 0) - 9.0 / 24.0).abs() < 1e-12);
}

#[test]
fn daily_probabilities_and_jitter_give_the_weeks_fraction() {
    // Home machine: weekday evenings 18:00–23:30, weekends 10:00–23:30 with
    // probability 0.8, jittered by a normal of sd 30 min at both ends.
    let d = Daily {
        weekday: Window {
            start: 18 * HOUR,
            end: 23 * HOUR + 1800,
        },
        weekend: Window {
            start: 10 * HOUR,
            end: 23 * HOUR + 1800,
        },
        weekday_prob: 0.9,
        weekend_prob: 0.8,
        jitter: Some(dist("{ dist = \"normal\", mean = 0, sd = 1800 }")),
        zone: Zone::Hours(dist("{ dist = \"uniform\", min = -8, max = 9 }")),
    };
    // (5 · 0.9 · 5.5 + 2 · 0.8 · 13.5) / 168 = 46.35 / 168.
    let want = (5.0 * 0.9 * 5.5 + 2.0 * 0.8 * 13.5) / 168.0;
    assert!((d.on_frac() - want).abs() < 1e-12);
    let spec = daily_spec(d);
    let (mut on, mut total) = (0, 0);
    for host in 0..20 {
        let (_, t) = run(&spec, 0, 0, 700 * DAY, &mut rng(100 + host));
        on += t[0];
        total += 700 * DAY;
    }
    let measured = on as f64 / total as f64;
    assert!((measured - want).abs() < 0.005, "{measured} vs {want}");
}

#[test]
fn a_day_is_used_with_its_probability() {
    // On all day (00:00–24:00) with probability 0.3 on weekdays, never at weekends.
    let mut d = daily(0, 24, 0.3, 0.0, 0.0);
    d.weekend = d.weekday;
    let spec = daily_spec(d);
    let (_, t) = run(&spec, 0, 0, 7000 * DAY, &mut rng(24));
    let used_days = t[0] as f64 / DAY as f64;
    assert!((used_days / 5000.0 - 0.3).abs() < 0.02, "{used_days}");
    // No day is ever used: the host stays off and draws nothing.
    let mut r = rng(25);
    let spec = daily_spec(daily(9, 17, 0.0, 0.0, 0.0));
    let a = Availability::new(&spec, 0, 0, &mut r);
    assert!(!a.is_on());
    assert_eq!(a.next_change(), Time::MAX);
    assert_eq!(r, rng(25));
}

#[test]
fn vacations_take_the_host_off() {
    // Always on, with vacations of exactly 5 days every 10 days.
    let spec = AvailSpec {
        vacation: Some(Vacation {
            every: dist("\"10d\""),
            length: dist("\"5d\""),
        }),
        ..AvailSpec::default()
    };
    // The host is away a third of the time.
    assert!((spec.expected_on_frac(0, 0) - 2.0 / 3.0).abs() < 1e-12);
    assert!(!spec.is_always());
    let (log, totals) = run(&spec, 0, 0, 90 * DAY, &mut rng(26));
    // After the first (partial) period, the host alternates 10 d on, 5 d away.
    let changes: Vec<Time> = log.windows(2).map(|w| w[1].0 - w[0].0).skip(1).collect();
    assert!(
        changes[..changes.len() - 1]
            .iter()
            .all(|&d| d == 10 * DAY || d == 5 * DAY),
        "{changes:?}"
    );
    assert!((totals[0] as f64 / (90 * DAY) as f64 - 2.0 / 3.0).abs() < 0.06);
    // Over a daily pattern: a vacation covers whole sessions, the model runs on.
    let mut spec = daily_spec(daily(9, 17, 1.0, 1.0, 0.0));
    spec.vacation = Some(Vacation {
        every: dist("{ dist = \"exponential\", mean = \"60d\" }"),
        length: dist("{ dist = \"uniform\", min = \"7d\", max = \"21d\" }"),
    });
    let want = 8.0 / 24.0 * (1.0 - 14.0 / 74.0);
    assert!((spec.expected_on_frac(0, 0) - want).abs() < 1e-12);
    let (mut on, mut total) = (0, 0);
    for host in 0..20 {
        let (log, t) = run(&spec, 0, 0, 1000 * DAY, &mut rng(200 + host));
        // Every on period lies within 09:00–17:00 of a day.
        for w in log.windows(2) {
            if w[0].1 {
                let s = w[0].0 % DAY;
                assert!(s >= 9 * HOUR && w[1].0 - w[0].0 <= 8 * HOUR, "{w:?}");
            }
        }
        on += t[0];
        total += 1000 * DAY;
    }
    let measured = on as f64 / total as f64;
    assert!((measured - want).abs() < 0.02, "{measured} vs {want}");
}

#[test]
fn a_mixture_draws_each_hosts_class_by_weight() {
    let class = |name: &str, cum_weight: f64, on_off: OnOff| AvailClass {
        name: name.into(),
        cum_weight,
        on_off,
        vacation: None,
    };
    let spec = AvailSpec {
        classes: vec![
            class(
                "random",
                0.3,
                OnOff::Process {
                    on_frac: 0.5,
                    lambda: 3600.0,
                },
            ),
            class(
                "office",
                1.0,
                OnOff::Daily(Box::new(daily(9, 17, 1.0, 0.0, 0.0))),
            ),
        ],
        ..AvailSpec::default()
    };
    assert!(spec.has_traits());
    let mut r = rng(27);
    let mut n = [0; 2];
    for _ in 0..10_000 {
        n[spec.draw_traits(&mut r).class as usize] += 1;
    }
    assert!((n[0] as f64 / 10_000.0 - 0.3).abs() < 0.02, "{n:?}");
    assert_eq!(spec.class_name(1), Some("office"));
    assert_eq!(spec.class_name(2), None);
    // Each host starts with its class's on fraction and follows its class's model.
    assert_eq!(spec.expected_on_frac(0, 0), 0.5);
    assert!((spec.expected_on_frac(0, 1) - 40.0 / 168.0).abs() < 1e-12);
    let t = HostTraits {
        class: 1,
        active_frac: 1.0,
        connected_frac: 1.0,
        utc_offset: None,
    };
    let a = Availability::join(&spec, t, 0, 0, &mut rng(28));
    assert_eq!(a.class(), 1);
    assert!(!a.is_on());
    assert_eq!(a.next_change(), 9 * HOUR);
    assert!((a.time_stats().on_frac - 40.0 / 168.0).abs() < 1e-12);
}

#[test]
fn active_and_connected_fractions_per_host() {
    // A plain number draws nothing and is the group's fraction.
    let spec = AvailSpec {
        active: (0.5, 3600.0),
        ..AvailSpec::default()
    };
    assert!(!spec.has_traits());
    // A distribution: each host its own fraction, clamped to [0, 1].
    let spec = AvailSpec {
        active: (0.3, 3600.0),
        active_dist: Some(dist("{ dist = \"uniform\", min = 0.2, max = 0.4 }")),
        connected_dist: Some(dist("{ dist = \"normal\", mean = 1.2, sd = 0.01 }")),
        ..AvailSpec::default()
    };
    assert!(spec.has_traits());
    let mut r = rng(29);
    let t = spec.draw_traits(&mut r);
    assert!((0.2..=0.4).contains(&t.active_frac), "{t:?}");
    assert_eq!(t.connected_frac, 1.0);
    let a = Availability::join(&spec, t, 0, 0, &mut rng(30));
    let ts = a.time_stats();
    assert_eq!(ts.active_frac, t.active_frac as f64);
    assert_eq!(ts.connected_frac, 1.0);
    // The host's active process runs at its own fraction.
    let t = HostTraits {
        class: 0,
        active_frac: 0.25,
        connected_frac: 1.0,
        utc_offset: None,
    };
    let mut r = rng(31);
    let mut a = Availability::join(&spec, t, 0, 0, &mut r);
    let (mut active, mut last) = (0, 0);
    let end = 2000 * DAY;
    while last < end {
        let next = a.next_change().min(end);
        active += (next - last) * a.computing() as Time;
        a.update(next, &spec, &mut r);
        last = next;
    }
    let f = active as f64 / end as f64;
    assert!((f - 0.25).abs() < 0.02, "{f}");
}

#[test]
fn daily_and_vacation_draws_do_not_depend_on_the_update_cadence() {
    let mut spec = daily_spec(Daily {
        jitter: Some(dist("{ dist = \"normal\", mean = 0, sd = \"2h\" }")),
        ..daily(8, 20, 0.7, 0.4, 3.0)
    });
    spec.vacation = Some(Vacation {
        every: dist("{ dist = \"exponential\", mean = \"20d\" }"),
        length: dist("{ dist = \"exponential\", mean = \"5d\" }"),
    });
    spec.active = (0.6, 5000.0);
    let (mut r1, mut r2) = (rng(32), rng(32));
    let mut one = Availability::new(&spec, 0, 0, &mut r1);
    let mut many = Availability::new(&spec, 0, 0, &mut r2);
    let end = 120 * DAY;
    one.update(end, &spec, &mut r1);
    let mut t = 0;
    while t < end {
        t = (t + 97).min(end);
        many.update(t, &spec, &mut r2);
    }
    assert_eq!(r1, r2);
    assert_eq!((one.state, one.next), (many.state, many.next));
    let (l1, _) = run(&spec, 0, 10, 60 * DAY, &mut rng(33));
    let (l2, _) = run(&spec, 0, 10, 60 * DAY, &mut rng(33));
    assert_eq!(l1, l2);
}

#[test]
fn vacations_start_as_if_long_running() {
    // Gaps exponential of mean 120 d, vacations of 14 d: at join a host is away with
    // probability 14/134, and a host at home waits a whole gap (mean 120 d, the
    // exponential's memoryless residual), not half of one.
    let spec = AvailSpec {
        vacation: Some(Vacation {
            every: dist("{ dist = \"exponential\", mean = \"120d\" }"),
            length: dist("\"14d\""),
        }),
        ..AvailSpec::default()
    };
    let (mut away, mut wait, mut home) = (0, 0.0, 0);
    let n = 20_000;
    for host in 0..n {
        let a = Availability::new(&spec, 0, 5 * DAY, &mut rng(1000 + host));
        if a.is_on() {
            home += 1;
            wait += (a.next_change() - 5 * DAY) as f64;
        } else {
            away += 1;
            // A vacation in progress ends within its 14 days.
            assert!(a.next_change() <= 5 * DAY + 14 * DAY);
        }
    }
    let p = away as f64 / n as f64;
    assert!((p - 14.0 / 134.0).abs() < 0.01, "{p}");
    let mean_wait = wait / home as f64 / DAY as f64;
    assert!((mean_wait - 120.0).abs() < 5.0, "{mean_wait}");
}
