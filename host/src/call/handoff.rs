//! Handing a call to an engine thread, and its reply back, without waking a
//! CPU that has gone idle.
//!
//! Engine threads (a dylib's worker, a Wasm plugin's worker, the JS engine's
//! thread, Python's workers) sleep between calls. Waking a thread on a CPU
//! that has gone idle is dear on a virtual machine, where the hypervisor has
//! to run that virtual CPU again: about 35 µs each way on the machine of
//! `docs/benchmarks.md`, more than most calls. An agent loop calls a plugin
//! every 50 µs or more (its own work in between), time enough for the engine
//! thread's CPU to go idle. So:
//! - a call to a sleeping engine thread first pins that thread to the
//!   caller's CPU ([`Handoff::prepare`]): the wake-up stays on that CPU, the
//!   caller yields the CPU to the thread while it waits ([`Wait::Yield`]),
//!   and the reply finds the caller there. The thread unpins itself as soon
//!   as it has the call, before it runs any plugin code, so the threads and
//!   processes a plugin starts may run on every CPU, as the host's own may;
//! - calls that come back to back (the next within [`BACK_TO_BACK`] of the
//!   last) find the thread awake: it waits for the next for up to [`SPIN`],
//!   yielding its CPU between looks (so that a caller on the same CPU runs
//!   at once, not after a scheduler's time slice), and the caller spins for
//!   the reply ([`Wait::Spin`], or [`Wait::Yield`] when the thread waits on
//!   the caller's own CPU), so neither side sleeps.
//!
//! Pinning is only a hint: where it is not available (not Linux) or fails,
//! every call is as correct, only dearer. Two callers that race for one
//! sleeping thread cannot leave it pinned while it runs a call (see
//! [`PINNING`]). A thread given up on (a call abandoned at its deadline) is
//! unpinned ([`Handoff::release`]), in case a caller pinned it while it
//! slept and the call never reached it.

use std::sync::atomic::{AtomicI32, AtomicU8, Ordering};
use std::sync::mpsc::{Receiver, TryRecvError};
use std::time::{Duration, Instant};
use tokio::sync::oneshot;

/// How long a thread spins for its next call after calls came back to back,
/// and a caller for its reply from a thread spinning on another CPU.
pub const SPIN: Duration = Duration::from_micros(50);

/// Calls this close together (from the engine thread's last reply to the
/// next call) count as back to back.
pub const BACK_TO_BACK: Duration = Duration::from_micros(20);

/// No CPU: the thread is not spinning.
const NONE: i32 = -1;

/// What the thread is doing, as [`Handoff::state`] says. A caller pins the
/// thread only by moving it from [`ASLEEP`] to [`PINNING`], and only the
/// thread leaves [`ASLEEP`] otherwise; a thread that wakes while a caller
/// is pinning it waits for the pin to be set ([`PINNED`]) and undoes it
/// before it runs anything. So no call ever runs pinned, even when two
/// callers race for one sleeping thread.
const AWAKE: u8 = 0;
/// Sleeping for its next call, unpinned.
const ASLEEP: u8 = 1;
/// A caller is pinning it (the system call is under way).
const PINNING: u8 = 2;
/// A caller pinned it (or tried to) while it slept.
const PINNED: u8 = 3;

/// What an engine thread shares with its callers: which thread it is,
/// whether it sleeps and whether a caller pinned it, and the CPU it waits
/// on awake.
#[derive(Debug)]
pub struct Handoff {
    /// The thread's kernel id, 0 until it registers.
    thread: AtomicI32,
    /// [`AWAKE`], [`ASLEEP`], [`PINNING`] or [`PINNED`].
    state: AtomicU8,
    /// The CPU it waits on awake for a call, or [`NONE`] (busy, asleep).
    spinning_on: AtomicI32,
}

impl Default for Handoff {
    fn default() -> Self {
        Self {
            thread: AtomicI32::new(0),
            state: AtomicU8::new(AWAKE),
            spinning_on: AtomicI32::new(NONE),
        }
    }
}

/// How a caller waits for the reply to a call it handed off.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Wait {
    /// The thread runs on another CPU: spin for up to [`SPIN`], then await.
    Spin,
    /// The thread was pinned to the caller's CPU, or waits awake on it:
    /// yield that CPU to it for up to [`SPIN`], then await.
    Yield,
}

impl Handoff {
    /// Called by a caller before it sends a call to the thread: pins a
    /// sleeping thread to the caller's CPU, and says how to wait for the
    /// reply.
    pub fn prepare(&self) -> Wait {
        let Some(cpu) = cpu::current() else {
            return Wait::Spin;
        };
        match self.spinning_on.load(Ordering::Relaxed) {
            NONE => {}
            awake if awake == cpu => return Wait::Yield,
            _ => return Wait::Spin,
        }
        let thread = self.thread.load(Ordering::Relaxed);
        // A thread that is busy (perhaps running a plugin's code, which must
        // not start threads or processes pinned) or still starting is not
        // pinned: it will take the call when it is done.
        if thread == 0
            || self
                .state
                .compare_exchange(ASLEEP, PINNING, Ordering::AcqRel, Ordering::Relaxed)
                .is_err()
        {
            return Wait::Spin;
        }
        let pinned = cpu::pin(thread, cpu);
        self.state.store(PINNED, Ordering::Release);
        if pinned {
            Wait::Yield
        } else {
            Wait::Spin
        }
    }

    /// Unpin the thread: it is given up on, and may run on forever (or
    /// sleep on with a pin a caller set, the call it was pinned for gone).
    pub fn release(&self) {
        let thread = self.thread.load(Ordering::Relaxed);
        if thread != 0 {
            cpu::unpin(thread);
        }
    }

    /// On the engine thread, done sleeping: be awake, and unpinned if a
    /// caller pinned it meanwhile, before running anything.
    fn wake(&self) {
        loop {
            match self.state.load(Ordering::Acquire) {
                // The caller's system call takes microseconds.
                PINNING => std::hint::spin_loop(),
                PINNED => {
                    self.state.store(AWAKE, Ordering::Relaxed);
                    cpu::unpin(self.thread.load(Ordering::Relaxed));
                    return;
                }
                _ => {
                    if self
                        .state
                        .compare_exchange(ASLEEP, AWAKE, Ordering::AcqRel, Ordering::Relaxed)
                        .is_ok()
                    {
                        return;
                    }
                }
            }
        }
    }
}

impl Wait {
    /// Await `answer` this way; `None` when its sender was dropped.
    pub async fn reply<T>(self, mut answer: oneshot::Receiver<T>) -> Option<T> {
        let mut spinning = Spin::for_(SPIN);
        loop {
            match answer.try_recv() {
                Ok(reply) => return Some(reply),
                Err(oneshot::error::TryRecvError::Closed) => return None,
                Err(oneshot::error::TryRecvError::Empty) => {}
            }
            let goes_on = match self {
                Wait::Spin => spinning.goes_on(),
                Wait::Yield => {
                    std::thread::yield_now();
                    Instant::now() < spinning.until
                }
            };
            if !goes_on {
                return answer.await.ok();
            }
        }
    }
}

/// How an engine thread waits for its next call: asleep, unless calls came
/// back to back, when it spins for [`SPIN`] on a CPU other than its
/// caller's.
#[derive(Debug)]
pub struct Pace {
    handoff: std::sync::Arc<Handoff>,
    back_to_back: bool,
}

impl Pace {
    /// The pace of the calling thread, which `handoff`'s callers then find
    /// (so it must be made on the engine thread itself).
    pub fn on_this_thread(handoff: std::sync::Arc<Handoff>) -> Self {
        if let Some(thread) = cpu::thread() {
            handoff.thread.store(thread, Ordering::Relaxed);
        }
        Self {
            handoff,
            back_to_back: false,
        }
    }

    /// The next item of `queue`, waited for as the module says; `None` when
    /// every sender is gone.
    pub fn recv<T>(&mut self, queue: &Receiver<T>) -> Option<T> {
        if self.back_to_back {
            let (item, while_awake) = self.recv_awake(queue);
            self.back_to_back = while_awake;
            item
        } else {
            let waiting = Instant::now();
            let item = self.recv_asleep(queue);
            self.back_to_back = waiting.elapsed() <= BACK_TO_BACK;
            item
        }
    }

    /// The next item, waited for asleep; the thread is awake and unpinned
    /// when this returns.
    fn recv_asleep<T>(&self, queue: &Receiver<T>) -> Option<T> {
        self.handoff.state.store(ASLEEP, Ordering::Release);
        let item = queue.recv().ok();
        self.handoff.wake();
        item
    }

    /// The next item, waited for awake for up to [`SPIN`] (yielding the CPU
    /// between looks, so that a caller on the same CPU runs at once) before
    /// sleeping, and whether it came while awake.
    fn recv_awake<T>(&self, queue: &Receiver<T>) -> (Option<T>, bool) {
        let spinning_on = &self.handoff.spinning_on;
        spinning_on.store(cpu::current().unwrap_or(NONE), Ordering::Relaxed);
        let until = Instant::now() + SPIN;
        let caught = loop {
            match queue.try_recv() {
                Ok(item) => break Some(Some(item)),
                Err(TryRecvError::Empty) if Instant::now() < until => std::thread::yield_now(),
                Err(TryRecvError::Empty) => break None,
                Err(TryRecvError::Disconnected) => break Some(None),
            }
        };
        spinning_on.store(NONE, Ordering::Relaxed);
        match caught {
            Some(item) => (item, true),
            None => (self.recv_asleep(queue), false),
        }
    }
}

impl Drop for Pace {
    /// The thread is ending: its id may be given to another thread, which
    /// no caller must pin.
    fn drop(&mut self) {
        self.handoff.thread.store(0, Ordering::Relaxed);
    }
}

/// A busy wait of a given length that reads the clock only every
/// [`Spin::TURNS_PER_CLOCK`] turns: a turn is a few nanoseconds, a clock
/// read tens of them under a hypervisor, so the waiter notices what it
/// waits for sooner.
struct Spin {
    until: Instant,
    turns: u32,
}

impl Spin {
    const TURNS_PER_CLOCK: u32 = 32;

    fn for_(length: Duration) -> Self {
        Self {
            until: Instant::now() + length,
            turns: 0,
        }
    }

    /// Whether to look again: true until the length has passed.
    fn goes_on(&mut self) -> bool {
        self.turns = self.turns.wrapping_add(1);
        if !self.turns.is_multiple_of(Self::TURNS_PER_CLOCK) {
            std::hint::spin_loop();
            return true;
        }
        Instant::now() < self.until
    }
}

/// The CPU calls of the kernel, where there are any.
#[cfg(target_os = "linux")]
mod cpu {
    use std::sync::OnceLock;

    /// The CPU the calling thread runs on.
    pub fn current() -> Option<i32> {
        // SAFETY: no arguments; returns -1 on failure.
        let cpu = unsafe { libc::sched_getcpu() };
        (cpu >= 0).then_some(cpu)
    }

    /// The calling thread's kernel id.
    pub fn thread() -> Option<i32> {
        // SAFETY: no arguments; cannot fail.
        Some(unsafe { libc::gettid() })
    }

    /// The CPUs the process may run on (its main thread's, which the host
    /// never pins), read once.
    fn allowed() -> Option<&'static libc::cpu_set_t> {
        static ALLOWED: OnceLock<Option<libc::cpu_set_t>> = OnceLock::new();
        ALLOWED
            .get_or_init(|| {
                // SAFETY: a zeroed cpu_set_t is an empty set; the kernel
                // writes at most its size.
                unsafe {
                    let mut set: libc::cpu_set_t = std::mem::zeroed();
                    let size = std::mem::size_of::<libc::cpu_set_t>();
                    (libc::sched_getaffinity(libc::getpid(), size, &mut set) == 0).then_some(set)
                }
            })
            .as_ref()
    }

    fn set(thread: i32, cpus: &libc::cpu_set_t) -> bool {
        let size = std::mem::size_of::<libc::cpu_set_t>();
        // SAFETY: `cpus` is a valid set of `size` bytes; an id that is gone
        // only makes the call fail.
        unsafe { libc::sched_setaffinity(thread, size, cpus) == 0 }
    }

    /// Pin `thread` to `cpu`.
    pub fn pin(thread: i32, cpu: i32) -> bool {
        let Ok(index) = usize::try_from(cpu) else {
            return false;
        };
        // SAFETY: a zeroed cpu_set_t is an empty set; `index` comes from
        // the kernel, so it is within the set (`CPU_SET` ignores one that
        // is not).
        let only = unsafe {
            let mut only = std::mem::zeroed::<libc::cpu_set_t>();
            libc::CPU_SET(index, &mut only);
            only
        };
        set(thread, &only)
    }

    /// How many CPUs the calling thread may run on.
    #[cfg(test)]
    pub fn allowed_here() -> i32 {
        allowed_of(0)
    }

    /// How many CPUs `thread` may run on (0: the calling thread).
    #[cfg(test)]
    pub fn allowed_of(thread: i32) -> i32 {
        // SAFETY: as in `allowed`.
        unsafe {
            let mut set: libc::cpu_set_t = std::mem::zeroed();
            let size = std::mem::size_of::<libc::cpu_set_t>();
            libc::sched_getaffinity(thread, size, &mut set);
            libc::CPU_COUNT(&set)
        }
    }

    /// Let `thread` run on any allowed CPU again.
    pub fn unpin(thread: i32) {
        if let Some(allowed) = allowed() {
            set(thread, allowed);
        }
    }
}

/// Without the kernel's CPU calls: no pinning, so callers spin as before.
#[cfg(not(target_os = "linux"))]
mod cpu {
    pub fn current() -> Option<i32> {
        None
    }
    pub fn thread() -> Option<i32> {
        None
    }
    pub fn pin(_thread: i32, _cpu: i32) -> bool {
        false
    }
    pub fn unpin(_thread: i32) {}
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::{mpsc, Arc};

    #[test]
    fn a_spin_ends_once_its_length_has_passed() {
        let started = Instant::now();
        let mut spinning = Spin::for_(Duration::from_millis(2));
        while spinning.goes_on() {}
        assert!(started.elapsed() >= Duration::from_millis(2));
    }

    #[cfg(target_os = "linux")]
    /// Where a call ran: its CPU, and how many CPUs its thread may use.
    type Placement = (i32, i32);

    #[cfg(target_os = "linux")]
    /// An engine thread that answers each call with where it ran.
    fn engine() -> (Arc<Handoff>, mpsc::Sender<oneshot::Sender<Placement>>) {
        let handoff = Arc::new(Handoff::default());
        let (calls, queue) = mpsc::channel::<oneshot::Sender<Placement>>();
        let its_handoff = Arc::clone(&handoff);
        std::thread::spawn(move || {
            let mut pace = Pace::on_this_thread(its_handoff);
            while let Some(reply) = pace.recv(&queue) {
                let _ = reply.send((cpu::current().unwrap(), cpu::allowed_here()));
            }
        });
        while handoff.thread.load(Ordering::Relaxed) == 0 {
            std::thread::yield_now();
        }
        (handoff, calls)
    }

    #[cfg(target_os = "linux")]
    /// Hand one call to the engine: how the caller waited, where it ran.
    fn call(
        rt: &tokio::runtime::Runtime,
        handoff: &Handoff,
        calls: &mpsc::Sender<oneshot::Sender<Placement>>,
    ) -> (Wait, Placement) {
        let (reply, answer) = oneshot::channel();
        let wait = handoff.prepare();
        calls.send(reply).unwrap();
        (wait, rt.block_on(wait.reply(answer)).unwrap())
    }

    /// Wait until the engine thread sleeps for its next call (on a loaded
    /// machine it may take a while to get there).
    #[cfg(target_os = "linux")]
    fn until_asleep(handoff: &Handoff) {
        let started = Instant::now();
        while handoff.state.load(Ordering::Relaxed) != ASLEEP {
            // Generous, so a loaded machine does not fail it.
            assert!(
                started.elapsed() < Duration::from_secs(30),
                "the thread never slept"
            );
            std::thread::sleep(Duration::from_millis(1));
        }
    }

    #[cfg(target_os = "linux")]
    fn runtime() -> tokio::runtime::Runtime {
        tokio::runtime::Builder::new_current_thread()
            .build()
            .unwrap()
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn a_call_to_a_sleeping_thread_runs_on_the_callers_cpu_and_unpinned() {
        let rt = runtime();
        let (handoff, calls) = engine();
        let everywhere = cpu::allowed_here();
        let mut on_the_callers = 0;
        for _ in 0..20 {
            // Far apart: the thread is asleep when each call comes.
            std::thread::sleep(Duration::from_millis(2));
            until_asleep(&handoff);
            let caller = cpu::current();
            let (wait, (ran_on, cpus)) = call(&rt, &handoff, &calls);
            assert_eq!(wait, Wait::Yield);
            assert_eq!(cpus, everywhere, "the call runs unpinned");
            on_the_callers += usize::from(Some(ran_on) == caller);
        }
        // The caller may move between reading its CPU and pinning now and
        // then; the call runs where it was pinned.
        assert!(
            on_the_callers >= 15,
            "{on_the_callers} of 20 on the caller's CPU"
        );
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn calls_back_to_back_find_the_thread_spinning_on_another_cpu() {
        if cpu::allowed_here() < 2 {
            return; // nowhere else to spin
        }
        let rt = runtime();
        let (handoff, calls) = engine();
        // On a loaded machine a call may come late now and then: what is
        // shown is that a run of quick calls gets there.
        // Generous, so a loaded machine does not fail it; a thread that never
        // spins still fails.
        let started = Instant::now();
        while call(&rt, &handoff, &calls).0 != Wait::Spin {
            assert!(
                started.elapsed() < Duration::from_secs(30),
                "no call found the thread spinning in 30 s"
            );
        }
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn callers_racing_for_one_sleeping_thread_never_leave_a_call_pinned() {
        let (handoff, calls) = engine();
        let everywhere = cpu::allowed_here();
        std::thread::scope(|s| {
            for caller in 0..3u64 {
                let (handoff, calls) = (&handoff, calls.clone());
                s.spawn(move || {
                    let rt = runtime();
                    for i in 0..300u64 {
                        // Gaps of 0 to 200 µs, different for each caller: the
                        // thread is now awake, now asleep, now just waking
                        // for another caller's call.
                        let gap = (i * 37 + caller * 53) % 200;
                        let until = Instant::now() + Duration::from_micros(gap);
                        while Instant::now() < until {
                            std::hint::spin_loop();
                        }
                        let (_, (_, cpus)) = call(&rt, handoff, &calls);
                        assert_eq!(cpus, everywhere, "call {i} of caller {caller} ran pinned");
                    }
                });
            }
        });
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn a_pinned_thread_is_pinned_until_it_takes_a_call_or_is_released() {
        let (handoff, calls) = engine();
        let thread = handoff.thread.load(Ordering::Relaxed);
        until_asleep(&handoff);
        assert_eq!(handoff.prepare(), Wait::Yield);
        assert_eq!(cpu::allowed_of(thread), 1, "pinned while it sleeps");
        handoff.release();
        assert_eq!(cpu::allowed_of(thread), cpu::allowed_here());
        drop(calls);
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn a_thread_that_ended_is_never_pinned() {
        let (handoff, calls) = engine();
        drop(calls);
        while handoff.thread.load(Ordering::Relaxed) != 0 {
            std::thread::yield_now();
        }
        assert_eq!(handoff.prepare(), Wait::Spin);
    }
}
