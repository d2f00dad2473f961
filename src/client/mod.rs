//! Simulated volunteer hosts. They talk to projects only through the scheduler's
//! [`Request`](crate::server::scheduler::Request) / [`Reply`](crate::server::scheduler::Reply)
//! interface, so host models can change without touching the server.

pub mod minimal;
pub mod scripted;
