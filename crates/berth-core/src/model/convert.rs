//! The binding's one conversion of a JavaScript number to a Rust integer type. Pure.
//!
//! It checks the type, not the product's rule: a number that is not finite, not whole, or out of
//! the target type's range is refused (never wrapped, truncated or saturated), naming the field.
//! A value of the right type then meets its range where the product rule lives (the `validate`
//! of the spec or options it belongs to, or the function taking it), with that rule's message.

use crate::model::errors::{Error, Result};

/// An integer type a JavaScript number may be converted to.
pub trait JsInteger: Sized + TryFrom<i128> {
    /// The smallest value of the type.
    const LOW: i128;
    /// The largest value of the type.
    const HIGH: i128;
}

macro_rules! js_integer {
    ($($t:ty),*) => {$(
        impl JsInteger for $t {
            const LOW: i128 = <$t>::MIN as i128;
            const HIGH: i128 = <$t>::MAX as i128;
        }
    )*};
}
js_integer!(u16, u32, u64, usize, i64);

/// Converts the JavaScript number `n` given for `field` to `T`.
///
/// # Errors
/// `E_INVALID_ARGUMENT` naming `field` ("must be a whole number from T::MIN to T::MAX") when
/// `n` is NaN, infinite, fractional or outside `T`'s range.
pub fn js_integer<T: JsInteger>(field: &str, n: f64) -> Result<T> {
    // `n as i128` is exact for every whole f64 within ±2^127, which covers every 64-bit type.
    let whole = n.is_finite() && n.fract() == 0.0 && n.abs() < 2f64.powi(100);
    whole
        .then_some(n as i128)
        .filter(|v| (T::LOW..=T::HIGH).contains(v))
        .and_then(|v| T::try_from(v).ok())
        .ok_or_else(|| {
            Error::invalid(
                field,
                format!(
                    "must be a whole number from {} to {}, got {n}",
                    T::LOW,
                    T::HIGH
                ),
            )
        })
}

/// [`js_integer`] over an optional value.
///
/// # Errors
/// As [`js_integer`].
pub fn js_integer_opt<T: JsInteger>(field: &str, n: Option<f64>) -> Result<Option<T>> {
    n.map(|n| js_integer(field, n)).transpose()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn field_of<T: JsInteger + std::fmt::Debug>(n: f64) -> String {
        let e = js_integer::<T>("x", n).unwrap_err();
        assert_eq!(e.code(), "E_INVALID_ARGUMENT");
        e.to_string()
    }

    #[test]
    fn whole_numbers_in_the_type_convert_exactly() {
        assert_eq!(js_integer::<u16>("p", 0.0).unwrap(), 0);
        assert_eq!(js_integer::<u16>("p", 65535.0).unwrap(), 65535);
        assert_eq!(js_integer::<u32>("m", 4_294_967_295.0).unwrap(), u32::MAX);
        assert_eq!(js_integer::<i64>("m", -1.0).unwrap(), -1);
        assert_eq!(
            js_integer::<u64>("ms", 9_007_199_254_740_991.0).unwrap(),
            9_007_199_254_740_991
        );
        assert_eq!(js_integer::<u64>("ms", -0.0).unwrap(), 0);
        assert_eq!(js_integer_opt::<u64>("ms", None).unwrap(), None);
    }

    #[test]
    fn anything_else_is_refused_never_wrapped_or_saturated() {
        for n in [-1.0, 65536.0, 1.5, f64::NAN, f64::INFINITY, -f64::INFINITY] {
            assert!(field_of::<u16>(n).contains("`x`"), "{n}");
        }
        assert!(field_of::<u16>(65536.0).contains("from 0 to 65535, got 65536"));
        assert!(field_of::<u32>(-1.0).contains("from 0 to 4294967295"));
        assert!(field_of::<u64>(-1.0).contains("from 0 to 18446744073709551615, got -1"));
        // 2^64 is the first f64 past u64::MAX, 2^63 the first past i64::MAX.
        field_of::<u64>(2f64.powi(64));
        field_of::<i64>(2f64.powi(63));
        assert_eq!(js_integer::<i64>("x", -(2f64.powi(63))).unwrap(), i64::MIN);
        field_of::<u64>(1e300);
    }
}
