//! Relations and sets over events as bitsets.
