//! Kubernetes resource quantities (`100m`, `1.5Gi`, `1e3`) in the canonical form
//! `k8s.io/apimachinery`'s `Quantity` writes them in: the value kept exactly, written with the
//! largest suffix that keeps the number whole, in the suffix family it was written in
//! (`1024Mi` is `1Gi`, `0.5` is `500m`, `1.5Gi` is `1536Mi`); and the arithmetic OpenKruise's
//! `resourcesPolicy` does on them (`Add`, `Neg`, `Cmp`, `MilliValue`, `SetMilli`).

/// The suffix families, as `Quantity.Format`.
#[derive(Clone, Copy, PartialEq, Debug)]
enum Format {
    BinarySi,
    DecimalSi,
    DecimalExponent,
}

/// A quantity: `mantissa × 10^scale`, and the family it was written in.
#[derive(Debug, Clone)]
pub(crate) struct Quantity {
    mantissa: i128,
    scale: i32,
    format: Format,
}

const DECIMAL: [(&str, i32); 10] = [
    ("n", -9),
    ("u", -6),
    ("m", -3),
    ("", 0),
    ("k", 3),
    ("M", 6),
    ("G", 9),
    ("T", 12),
    ("P", 15),
    ("E", 18),
];
const BINARY: [(&str, u32); 6] = [
    ("Ki", 10),
    ("Mi", 20),
    ("Gi", 30),
    ("Ti", 40),
    ("Pi", 50),
    ("Ei", 60),
];

/// The exponents a quantity may have: beyond them it is refused, so that no arithmetic on one
/// a manifest writes (`1e-999999999`) takes longer than its text (apimachinery keeps nano
/// precision, and the API server's largest quantities are far below 10^40).
const SCALES: std::ops::RangeInclusive<i32> = -40..=40;

fn parse(text: &str) -> Option<Quantity> {
    let text = text.trim();
    let (negative, rest) = match text.strip_prefix('-') {
        Some(r) => (true, r),
        None => (false, text.strip_prefix('+').unwrap_or(text)),
    };
    let number_end = rest
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(rest.len());
    let (number, suffix) = rest.split_at(number_end);
    let (whole, fraction) = number.split_once('.').unwrap_or((number, ""));
    if whole.is_empty() && fraction.is_empty() || number.matches('.').count() > 1 {
        return None;
    }
    let digits: String = format!("{whole}{fraction}");
    let mut mantissa: i128 = digits.parse().ok()?;
    let mut scale = -i32::try_from(fraction.len()).ok()?;
    let format = if let Some((_, power)) = BINARY.iter().find(|(s, _)| *s == suffix) {
        mantissa = mantissa.checked_mul(1i128.checked_shl(*power)?)?;
        Format::BinarySi
    } else if let Some((_, exp)) = DECIMAL.iter().find(|(s, _)| *s == suffix) {
        scale += exp;
        Format::DecimalSi
    } else if let Some(exp) = suffix.strip_prefix(['e', 'E']) {
        scale += exp.parse::<i32>().ok()?;
        Format::DecimalExponent
    } else {
        return None;
    };
    if !SCALES.contains(&scale) {
        return None;
    }
    if negative {
        mantissa = -mantissa;
    }
    let mut q = Quantity {
        mantissa,
        scale,
        format,
    };
    // Quantities keep nano precision at most, rounded up (ParseQuantity).
    q.round_up(-9);
    Some(q)
}

impl Quantity {
    /// Rounded up (away from zero) to `10^scale`, as `Quantity.RoundUp`.
    fn round_up(&mut self, scale: i32) {
        while self.scale < scale {
            let rest = self.mantissa % 10;
            self.mantissa /= 10;
            if rest > 0 {
                self.mantissa += 1;
            } else if rest < 0 {
                self.mantissa -= 1;
            }
            self.scale += 1;
        }
    }

    /// The whole value when it is one.
    fn whole(&self) -> Option<i128> {
        if self.scale >= 0 {
            return self
                .mantissa
                .checked_mul(10i128.checked_pow(self.scale.unsigned_abs())?);
        }
        let divisor = 10i128.checked_pow(self.scale.unsigned_abs())?;
        (self.mantissa % divisor == 0).then_some(self.mantissa / divisor)
    }

    fn canonical(&self) -> String {
        if self.mantissa == 0 {
            return "0".into();
        }
        let binary = self
            .whole()
            .filter(|w| self.format == Format::BinarySi && !(-1024 < *w && *w < 1024));
        if let Some(mut amount) = binary {
            let mut suffix = "";
            for (s, _) in BINARY {
                if amount % 1024 != 0 {
                    break;
                }
                amount /= 1024;
                suffix = s;
            }
            return format!("{amount}{suffix}");
        }
        let (mut amount, mut exponent) = (self.mantissa, self.scale);
        while amount % 10 == 0 {
            amount /= 10;
            exponent += 1;
        }
        let shift = exponent.rem_euclid(3);
        // A mantissa too long to widen (beyond any quantity a cluster holds) is written as
        // it is, with its exponent.
        let Some(widened) = amount.checked_mul(10i128.pow(shift.unsigned_abs())) else {
            return format!("{amount}e{exponent}");
        };
        amount = widened;
        exponent -= shift;
        let si = DECIMAL.iter().find(|(_, e)| *e == exponent);
        match (self.format, si) {
            (Format::DecimalExponent, _) if exponent == 0 => amount.to_string(),
            (Format::DecimalExponent, _) | (_, None) => format!("{amount}e{exponent}"),
            (_, Some((suffix, _))) => format!("{amount}{suffix}"),
        }
    }
}

impl Quantity {
    /// `text` as a quantity, or None when it is not one.
    pub(crate) fn parse(text: &str) -> Option<Self> {
        parse(text)
    }

    /// `milli` thousandths, in the decimal family (`NewMilliQuantity(milli, DecimalSI)`).
    pub(crate) fn decimal_milli(milli: i64) -> Self {
        Quantity {
            mantissa: milli.into(),
            scale: -3,
            format: Format::DecimalSi,
        }
    }

    /// `value`, in the decimal family (`NewQuantity(value, DecimalSI)`).
    pub(crate) fn decimal(value: i64) -> Self {
        Quantity {
            mantissa: value.into(),
            scale: 0,
            format: Format::DecimalSi,
        }
    }

    /// This quantity's family with the value `milli` thousandths (`SetMilli`).
    pub(crate) fn with_milli(&self, milli: i64) -> Self {
        Quantity {
            mantissa: milli.into(),
            scale: -3,
            format: self.format,
        }
    }

    /// The value in thousandths, rounded up (away from zero), as `MilliValue`; None beyond
    /// an `i64`.
    pub(crate) fn milli_value(&self) -> Option<i64> {
        let mut q = self.clone();
        q.round_up(-3);
        let milli = q
            .mantissa
            .checked_mul(10i128.checked_pow(u32::try_from(q.scale + 3).ok()?)?)?;
        i64::try_from(milli).ok()
    }

    pub(crate) fn is_zero(&self) -> bool {
        self.mantissa == 0
    }

    pub(crate) fn is_negative(&self) -> bool {
        self.mantissa < 0
    }

    /// `-self` (`Neg`).
    pub(crate) fn neg(&self) -> Self {
        Quantity {
            mantissa: -self.mantissa,
            ..self.clone()
        }
    }

    /// `self + other` in `self`'s family, or `other`'s when `self` is zero (`Add`); None when
    /// it overflows.
    pub(crate) fn add(&self, other: &Quantity) -> Option<Self> {
        let (a, b, scale) = self.aligned(other)?;
        Some(Quantity {
            mantissa: a.checked_add(b)?,
            scale,
            format: if self.is_zero() {
                other.format
            } else {
                self.format
            },
        })
    }

    /// How `self` compares with `other` (`Cmp`); None when they cannot be compared exactly.
    pub(crate) fn compare(&self, other: &Quantity) -> Option<std::cmp::Ordering> {
        let (a, b, _) = self.aligned(other)?;
        Some(a.cmp(&b))
    }

    /// Both mantissas at the smaller of the two scales, and that scale.
    fn aligned(&self, other: &Quantity) -> Option<(i128, i128, i32)> {
        let scale = self.scale.min(other.scale);
        let at = |q: &Quantity| {
            q.mantissa
                .checked_mul(10i128.checked_pow(u32::try_from(q.scale - scale).ok()?)?)
        };
        Some((at(self)?, at(other)?, scale))
    }
}

impl std::fmt::Display for Quantity {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.canonical())
    }
}

/// `text`'s canonical form, or None when it is not a quantity.
pub(crate) fn canonical(text: &str) -> Option<String> {
    parse(text).map(|q| q.canonical())
}

/// `text` rounded up to thousandths, canonical (the API's defaulting of resource lists).
pub(crate) fn rounded_to_milli(text: &str) -> Option<String> {
    let mut q = parse(text)?;
    q.round_up(-3);
    Some(q.canonical())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn canonical_forms_as_apimachinery_writes_them() {
        // Cases of k8s.io/apimachinery/pkg/api/resource/quantity_test.go (TestQuantityCanonicalize
        // and TestQuantityParse).
        for (input, want) in [
            ("0", "0"),
            ("0Ki", "0"),
            ("100m", "100m"),
            ("0.1", "100m"),
            ("1000m", "1"),
            ("1", "1"),
            ("1024Mi", "1Gi"),
            ("1.5Gi", "1536Mi"),
            ("1Ki", "1Ki"),
            ("1000Ki", "1000Ki"),
            ("1024", "1024"),
            ("512Mi", "512Mi"),
            ("1e3", "1e3"),
            ("1E6", "1e6"),
            ("1e1", "10"),
            ("0.5", "500m"),
            ("1k", "1k"),
            ("1000k", "1M"),
            ("1.001", "1001m"),
            ("1.0001", "1000100u"),
            ("5n", "5n"),
            ("1.5", "1500m"),
            ("-1Ki", "-1Ki"),
            ("128974848", "128974848"),
            ("129e6", "129e6"),
            ("129M", "129M"),
            ("123Mi", "123Mi"),
            ("100Ki", "100Ki"),
            ("0.5Ki", "512"),
        ] {
            assert_eq!(canonical(input).as_deref(), Some(want), "{input}");
        }
        assert_eq!(canonical("1.2.3"), None);
        assert_eq!(canonical("5X"), None);
        assert_eq!(rounded_to_milli("0.0001").as_deref(), Some("1m"));
        assert_eq!(rounded_to_milli("100m").as_deref(), Some("100m"));
    }
}
