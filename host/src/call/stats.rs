//! Per-plugin figures: for each hook of a plugin, how many calls the host
//! made, how many failed or timed out, and how long they took.
//!
//! Every call of a run goes through the run's session (`session.rs`), which
//! records it here. Recording is a few relaxed atomic additions on counters
//! the plugin's own hook owns: no lock, nothing shared between plugins, so
//! plugins called at once from many runs never wait for each other. The
//! latencies go into a log-linear histogram (8 buckets per power of two of
//! nanoseconds), so a quantile read from it is within 12.5% of the true
//! value above 8 ns, and never above the slowest call seen.
//!
//! The figures of a plugin start when it is loaded: a plugin whose file
//! changed is loaded again, with figures of its own.

use crate::call::error::CallError;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::OnceLock;
use std::time::Duration;
use yohost_contract::Hook;

/// Buckets per power of two, as a power of two.
const SUB_BITS: u32 = 3;
const SUB: usize = 1 << SUB_BITS;
/// The largest power of two of nanoseconds with buckets of its own (2^40 ns
/// is about 18 minutes, above every hook's timeout); slower calls share the
/// last bucket.
const TOP_EXPONENT: u32 = 40;
const BUCKETS: usize = (TOP_EXPONENT - SUB_BITS + 2) as usize * SUB;

/// The bucket of a latency of `ns` nanoseconds: exact below [`SUB`], then
/// [`SUB`] buckets per power of two.
fn bucket(ns: u64) -> usize {
    if ns < SUB as u64 {
        return ns as usize;
    }
    let exponent = 63 - ns.leading_zeros();
    let sub = (ns >> (exponent - SUB_BITS)) as usize & (SUB - 1);
    (((exponent - SUB_BITS + 1) as usize) * SUB + sub).min(BUCKETS - 1)
}

/// The largest latency, in nanoseconds, that falls in bucket `index`.
fn bucket_top(index: usize) -> u64 {
    if index < SUB {
        return index as u64;
    }
    let exponent = (index / SUB) as u32 + SUB_BITS - 1;
    let sub = (index % SUB) as u64;
    let low = (SUB as u64 + sub) << (exponent - SUB_BITS);
    low + (1u64 << (exponent - SUB_BITS)) - 1
}

/// The counters of one hook of one plugin.
struct HookCounters {
    calls: AtomicU64,
    failures: AtomicU64,
    timeouts: AtomicU64,
    max_ns: AtomicU64,
    total_ns: AtomicU64,
    latency: Box<[AtomicU64]>,
}

impl HookCounters {
    fn new() -> Self {
        Self {
            calls: AtomicU64::new(0),
            failures: AtomicU64::new(0),
            timeouts: AtomicU64::new(0),
            max_ns: AtomicU64::new(0),
            total_ns: AtomicU64::new(0),
            latency: (0..BUCKETS).map(|_| AtomicU64::new(0)).collect(),
        }
    }

    fn figures(&self, hook: Hook) -> HookFigures {
        let counts: Vec<u64> = self
            .latency
            .iter()
            .map(|b| b.load(Ordering::Relaxed))
            .collect();
        let max = self.max_ns.load(Ordering::Relaxed);
        let timed: u64 = counts.iter().sum();
        let quantile = |q: f64| -> Option<Duration> {
            if timed == 0 {
                return None;
            }
            // The rank of the q-quantile, 1-based: the smallest latency
            // that at least q of the timed calls did not exceed.
            let rank = ((q * timed as f64).ceil() as u64).clamp(1, timed);
            let mut seen = 0;
            let index = counts
                .iter()
                .position(|&c| {
                    seen += c;
                    seen >= rank
                })
                .unwrap_or(BUCKETS - 1);
            Some(Duration::from_nanos(bucket_top(index).min(max)))
        };
        HookFigures {
            hook,
            calls: self.calls.load(Ordering::Relaxed),
            failures: self.failures.load(Ordering::Relaxed),
            timeouts: self.timeouts.load(Ordering::Relaxed),
            timed,
            p50: quantile(0.50),
            p99: quantile(0.99),
            max: (timed > 0).then(|| Duration::from_nanos(max)),
            total: Duration::from_nanos(self.total_ns.load(Ordering::Relaxed)),
        }
    }
}

/// The figures the host keeps about one loaded plugin, hook by hook. Each
/// hook's counters are made at its first call, so a plugin costs memory
/// only for the hooks it is called with.
#[derive(Default)]
pub struct PluginStats {
    hooks: [OnceLock<HookCounters>; Hook::ALL.len()],
}

impl PluginStats {
    /// Record one call of `hook`: `latency` is how long the host waited for
    /// the plugin (`None` when the call never reached it, or was abandoned
    /// because its run was cancelled), `error` why it failed, if it did. A
    /// cancelled call is counted, but not as a failure: the run ended, the
    /// plugin did nothing wrong.
    pub(crate) fn record(&self, hook: Hook, latency: Option<Duration>, error: Option<&CallError>) {
        let counters = self.hooks[hook as usize].get_or_init(HookCounters::new);
        counters.calls.fetch_add(1, Ordering::Relaxed);
        match error {
            None | Some(CallError::Cancelled) => {}
            Some(error) => {
                counters.failures.fetch_add(1, Ordering::Relaxed);
                if matches!(error, CallError::Timeout(_)) {
                    counters.timeouts.fetch_add(1, Ordering::Relaxed);
                }
            }
        }
        if let Some(latency) = latency {
            let ns = u64::try_from(latency.as_nanos()).unwrap_or(u64::MAX);
            counters.latency[bucket(ns)].fetch_add(1, Ordering::Relaxed);
            counters.max_ns.fetch_max(ns, Ordering::Relaxed);
            counters.total_ns.fetch_add(ns, Ordering::Relaxed);
        }
    }

    /// The figures of every hook called at least once, in contract order.
    /// Taken while calls go on, they may count a call in one figure and not
    /// yet in another.
    pub fn figures(&self) -> Vec<HookFigures> {
        Hook::ALL
            .iter()
            .zip(&self.hooks)
            .filter_map(|(hook, counters)| counters.get().map(|c| c.figures(*hook)))
            .collect()
    }
}

impl std::fmt::Debug for PluginStats {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_list().entries(self.figures()).finish()
    }
}

/// What the host measured of one hook of one plugin.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HookFigures {
    /// The hook.
    pub hook: Hook,
    /// Every call the host made, including those that failed closed
    /// without reaching the plugin (it was unloaded for the run).
    pub calls: u64,
    /// Calls that failed, for any reason but the run's cancel (timeouts
    /// included).
    pub failures: u64,
    /// Calls still unanswered at their deadline.
    pub timeouts: u64,
    /// Calls that reached the plugin and were timed: the latencies below
    /// are theirs.
    pub timed: u64,
    /// The median latency (`None` before any timed call).
    pub p50: Option<Duration>,
    /// The 99th percentile latency.
    pub p99: Option<Duration>,
    /// The slowest call.
    pub max: Option<Duration>,
    /// The timed calls' latencies added up: what the plugin cost its runs
    /// in this hook, slow calls included (a median hides them).
    pub total: Duration,
}

impl HookFigures {
    /// The mean latency of the timed calls (`None` before any): with a slow
    /// tail it is well above the median, and it is what each call cost on
    /// average.
    pub fn mean(&self) -> Option<Duration> {
        let total = u64::try_from(self.total.as_nanos()).unwrap_or(u64::MAX);
        (self.timed > 0).then(|| Duration::from_nanos(total / self.timed))
    }
}

/// The figures of one loaded plugin, from
/// [`PluginHost::stats`](crate::PluginHost::stats).
#[derive(Debug, Clone)]
pub struct PluginFigures {
    /// The plugin's name.
    pub plugin: String,
    /// Its engine.
    pub engine: crate::model::EngineKind,
    /// Each hook called since it was loaded, in contract order.
    pub hooks: Vec<HookFigures>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_latency_falls_in_a_bucket_whose_top_is_within_an_eighth_of_it() {
        let mut samples: Vec<u64> = (0..5000).collect();
        samples.extend((0..63).flat_map(|e| [1u64 << e, (1u64 << e) + 1, (1u64 << (e + 1)) - 1]));
        samples.push(u64::MAX);
        for ns in samples {
            let index = bucket(ns);
            assert!(index < BUCKETS, "{ns} -> {index}");
            if index == BUCKETS - 1 {
                assert!(ns >= bucket_top(BUCKETS - 2), "{ns}");
                continue;
            }
            let top = bucket_top(index);
            assert!(top >= ns, "{ns}: top {top}");
            assert!(top - ns <= ns / 8, "{ns}: top {top}");
            assert!(
                index == 0 || bucket_top(index - 1) < ns,
                "{ns}: index {index}"
            );
        }
    }

    #[test]
    fn quantiles_come_from_the_calls_and_never_exceed_the_slowest() {
        let stats = PluginStats::default();
        for us in 1..=100u64 {
            stats.record(Hook::BeforeTool, Some(Duration::from_micros(us)), None);
        }
        let timeout = CallError::Timeout(Duration::from_secs(1));
        stats.record(
            Hook::BeforeTool,
            Some(Duration::from_secs(1)),
            Some(&timeout),
        );
        stats.record(
            Hook::BeforeTool,
            None,
            Some(&CallError::Unloaded("it timed out".into())),
        );
        stats.record(Hook::BeforeTool, None, Some(&CallError::Cancelled));
        let figures = stats.figures();
        assert_eq!(figures.len(), 1, "only the hook that was called");
        let f = &figures[0];
        assert_eq!(f.hook, Hook::BeforeTool);
        assert_eq!((f.calls, f.failures, f.timeouts, f.timed), (103, 2, 1, 101));
        let p50 = f.p50.unwrap();
        assert!(
            p50 >= Duration::from_micros(51) && p50 <= Duration::from_micros(51) * 9 / 8,
            "{p50:?}"
        );
        let p99 = f.p99.unwrap();
        assert!(
            p99 >= Duration::from_micros(100) && p99 <= Duration::from_micros(100) * 9 / 8,
            "{p99:?}"
        );
        assert_eq!(f.max, Some(Duration::from_secs(1)));
        // 1 to 100 µs and the one second: the slow call shows in the total
        // and the mean, which the quantiles hide.
        let total = Duration::from_micros(5050) + Duration::from_secs(1);
        assert_eq!(f.total, total);
        assert_eq!(f.mean(), Some(total / 101));
    }

    #[test]
    fn one_call_is_every_quantile_exactly() {
        let stats = PluginStats::default();
        stats.record(Hook::OnInput, Some(Duration::from_nanos(1234)), None);
        let f = &stats.figures()[0];
        assert_eq!(f.p50, Some(Duration::from_nanos(1234)));
        assert_eq!(f.p99, Some(Duration::from_nanos(1234)));
    }

    #[test]
    fn calls_from_many_threads_are_all_counted() {
        let stats = PluginStats::default();
        std::thread::scope(|s| {
            for _ in 0..4 {
                s.spawn(|| {
                    for i in 0..10_000u64 {
                        stats.record(Hook::AfterTool, Some(Duration::from_nanos(i)), None);
                    }
                });
            }
        });
        let f = &stats.figures()[0];
        assert_eq!((f.calls, f.timed), (40_000, 40_000));
        assert_eq!(
            f.total,
            Duration::from_nanos(4 * (0..10_000u64).sum::<u64>())
        );
    }
}
