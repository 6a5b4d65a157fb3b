//! Handing a call to an engine thread, and its reply back, without waking a
//! CPU that has gone idle.
//!
//! Engine threads (a dylib's worker, a Wasm run's worker, the JS engine's
//! thread, Python's workers) sleep between calls. Waking a thread on a CPU
//! that has gone idle is dear on a virtual machine, where the hypervisor has
//! to run that virtual CPU again: about 35 µs each way on the machine of
//! `docs/benchmarks.md`, more than most calls. An agent loop calls a plugin
//! every 50 µs or more (its own work in between), time enough for the engine
//! thread's CPU to go idle. So:
//! - a call to a sleeping engine thread first pins that thread to the
//!   caller's CPU ([`Handoff::prepare`]): the wake-up stays on that CPU, the
//!   caller yields the CPU to the thread while it waits ([`Wait::Yield`]),
//!   and the reply finds the caller there;
//! - calls that come back to back (the next within [`BACK_TO_BACK`] of the
//!   last) find the thread awake: after such a call it leaves the caller's
//!   CPU and spins on another for up to [`SPIN`] ([`Pace`]), and the caller
//!   spins for the reply ([`Wait::Spin`]), so neither side sleeps.
//!
//! Pinning is only a hint: where it is not available (not Linux) or fails,
//! every call is as correct, only dearer. A thread given up on (a call
//! abandoned at its deadline) is unpinned ([`Handoff::release`]), so code
//! that never returns does not hold one CPU.

use std::sync::atomic::{AtomicI32, Ordering};
use std::sync::mpsc::{Receiver, TryRecvError};
use std::time::{Duration, Instant};
use tokio::sync::oneshot;

/// How long a thread spins for its next call after calls came back to back,
/// and a caller for its reply from a thread spinning on another CPU.
pub const SPIN: Duration = Duration::from_micros(50);

/// Calls this close together (from the engine thread's last reply to the
/// next call) count as back to back.
pub const BACK_TO_BACK: Duration = Duration::from_micros(20);

/// No CPU: the thread is not pinned, or not spinning.
const NONE: i32 = -1;

/// What an engine thread shares with its callers: which thread it is, the
/// CPU it is pinned to, and the CPU it spins on while it waits awake.
#[derive(Debug)]
pub struct Handoff {
    /// The thread's kernel id, 0 until it registers.
    thread: AtomicI32,
    /// The CPU it was last pinned to, or [`NONE`].
    pinned: AtomicI32,
    /// The CPU it spins on waiting for a call, or [`NONE`] (busy, asleep).
    spinning_on: AtomicI32,
}

impl Default for Handoff {
    fn default() -> Self {
        Self {
            thread: AtomicI32::new(0),
            pinned: AtomicI32::new(NONE),
            spinning_on: AtomicI32::new(NONE),
        }
    }
}

/// How a caller waits for the reply to a call it handed off.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Wait {
    /// The thread runs on another CPU: spin for up to [`SPIN`], then await.
    Spin,
    /// The thread was pinned to the caller's CPU: yield that CPU to it for
    /// up to [`SPIN`], then await.
    Yield,
}

impl Handoff {
    /// Called by a caller before it sends a call to the thread: pins a thread
    /// that is not spinning on another CPU to the caller's, and says how to
    /// wait for the reply.
    pub fn prepare(&self) -> Wait {
        let Some(cpu) = cpu::current() else {
            return Wait::Spin;
        };
        let spinning = self.spinning_on.load(Ordering::Relaxed);
        if spinning != NONE && spinning != cpu {
            return Wait::Spin;
        }
        let thread = self.thread.load(Ordering::Relaxed);
        if thread == 0 {
            return Wait::Spin; // still starting: it is awake anyway
        }
        if self.pinned.swap(cpu, Ordering::Relaxed) != cpu && !cpu::pin(thread, cpu) {
            self.pinned.store(NONE, Ordering::Relaxed);
            return Wait::Spin;
        }
        Wait::Yield
    }

    /// Unpin the thread: it is given up on, and may run on forever.
    pub fn release(&self) {
        self.pinned.store(NONE, Ordering::Relaxed);
        let thread = self.thread.load(Ordering::Relaxed);
        if thread != 0 {
            cpu::unpin(thread);
        }
    }

    /// On the engine thread: move off the CPU it was pinned to, so that it
    /// can spin without taking the caller's CPU. False when there is no
    /// other CPU to go to.
    fn leave_callers_cpu(&self) -> bool {
        let pinned = self.pinned.load(Ordering::Relaxed);
        if pinned == NONE {
            return true;
        }
        if !cpu::pin_elsewhere(self.thread.load(Ordering::Relaxed), pinned) {
            return false;
        }
        // A caller that pinned it again meanwhile keeps its pin.
        let _ = self
            .pinned
            .compare_exchange(pinned, NONE, Ordering::Relaxed, Ordering::Relaxed);
        true
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
        let waiting = Instant::now();
        if self.back_to_back && self.handoff.leave_callers_cpu() {
            let (item, while_spinning) = self.recv_spinning(queue);
            self.back_to_back = while_spinning;
            item
        } else {
            let item = queue.recv().ok();
            self.back_to_back = waiting.elapsed() <= BACK_TO_BACK;
            item
        }
    }

    /// The next item, spinning for up to [`SPIN`] before sleeping, and
    /// whether it came while this thread spun.
    fn recv_spinning<T>(&self, queue: &Receiver<T>) -> (Option<T>, bool) {
        let spinning_on = &self.handoff.spinning_on;
        spinning_on.store(cpu::current().unwrap_or(NONE), Ordering::Relaxed);
        let mut spinning = Spin::for_(SPIN);
        let caught = loop {
            match queue.try_recv() {
                Ok(item) => break Some(Some(item)),
                Err(TryRecvError::Empty) if spinning.goes_on() => {}
                Err(TryRecvError::Empty) => break None,
                Err(TryRecvError::Disconnected) => break Some(None),
            }
        };
        spinning_on.store(NONE, Ordering::Relaxed);
        match caught {
            Some(item) => (item, true),
            None => (queue.recv().ok(), false),
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

    /// Let `thread` run on any allowed CPU but `cpu`; false when there is
    /// no other.
    pub fn pin_elsewhere(thread: i32, cpu: i32) -> bool {
        let (Some(allowed), Ok(index)) = (allowed(), usize::try_from(cpu)) else {
            return false;
        };
        let mut others = *allowed;
        // SAFETY: plain bit operations on a set we own; `CPU_CLR` ignores
        // an index beyond the set.
        let left = unsafe {
            libc::CPU_CLR(index, &mut others);
            libc::CPU_COUNT(&others)
        };
        left > 0 && set(thread, &others)
    }

    /// How many CPUs the calling thread may run on.
    #[cfg(test)]
    pub fn allowed_here() -> i32 {
        // SAFETY: as in `allowed`, for the calling thread (id 0).
        unsafe {
            let mut set: libc::cpu_set_t = std::mem::zeroed();
            let size = std::mem::size_of::<libc::cpu_set_t>();
            libc::sched_getaffinity(0, size, &mut set);
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
    pub fn pin_elsewhere(_thread: i32, _cpu: i32) -> bool {
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

    #[cfg(target_os = "linux")]
    fn runtime() -> tokio::runtime::Runtime {
        tokio::runtime::Builder::new_current_thread()
            .build()
            .unwrap()
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn a_call_to_a_sleeping_thread_runs_on_the_callers_cpu() {
        let rt = runtime();
        let (handoff, calls) = engine();
        for _ in 0..20 {
            // Far apart: the thread is asleep when each call comes.
            std::thread::sleep(Duration::from_millis(2));
            let (wait, (ran_on, cpus)) = call(&rt, &handoff, &calls);
            assert_eq!(wait, Wait::Yield);
            assert_eq!(cpus, 1, "pinned to one CPU");
            assert_eq!(ran_on, handoff.pinned.load(Ordering::Relaxed));
        }
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
        let started = Instant::now();
        while call(&rt, &handoff, &calls).0 != Wait::Spin {
            assert!(
                started.elapsed() < Duration::from_secs(10),
                "no call found the thread spinning in 10 s"
            );
        }
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn a_released_thread_may_run_on_any_cpu_again() {
        let rt = runtime();
        let (handoff, calls) = engine();
        std::thread::sleep(Duration::from_millis(2));
        assert_eq!(call(&rt, &handoff, &calls).0, Wait::Yield);
        handoff.release();
        std::thread::sleep(Duration::from_millis(2));
        let (reply, answer) = oneshot::channel();
        calls.send(reply).unwrap();
        let (_, cpus) = rt.block_on(answer).unwrap();
        assert_eq!(cpus, cpu::allowed_here().max(1));
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
