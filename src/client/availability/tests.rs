use super::*;
use crate::base::dist::{Kind, Num};
use crate::engine::rng::{StreamKind, stream};
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
    assert!((spec.expected_on_frac(0) - 1000.5 / 2500.5).abs() < 1e-12);
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
    let want = 1.0 - 0.5 * (-1.0f64).exp();
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
        // Then on for a day: the ordinary EMA towards 1.
        a.update(gap + DAY, &spec, &mut r);
        let w2 = (-0.1f64).exp();
        let want = want * w2 + (1.0 - w2);
        assert!((a.time_stats().on_frac - want).abs() < 1e-14, "gap {gap}");
    }
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
    assert_eq!(
        (one.on, one.active, one.connected),
        (many.on, many.active, many.connected)
    );
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
