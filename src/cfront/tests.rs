//! Unit tests of the C front end: each C form against the model it must give.

use super::compile;
use crate::diagnostics::FileId;
