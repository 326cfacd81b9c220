//! Kubernetes resource quantities (`100m`, `1.5Gi`, `1e3`) in the canonical form
//! `k8s.io/apimachinery`'s `Quantity` writes them in: the value kept exactly, written with the
//! largest suffix that keeps the number whole, in the suffix family it was written in
//! (`1024Mi` is `1Gi`, `0.5` is `500m`, `1.5Gi` is `1536Mi`).

/// The suffix families, as `Quantity.Format`.
#[derive(Clone, Copy, PartialEq, Debug)]
enum Format {
    BinarySi,
    DecimalSi,
    DecimalExponent,
}

/// A quantity: `mantissa × 10^scale`, and the family it was written in.
#[derive(Debug)]
struct Quantity {
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
        match exponent.rem_euclid(3) {
            1 => {
                amount *= 10;
                exponent -= 1;
            }
            2 => {
                amount *= 100;
                exponent -= 2;
            }
            _ => {}
        }
        let si = DECIMAL.iter().find(|(_, e)| *e == exponent);
        match (self.format, si) {
            (Format::DecimalExponent, _) if exponent == 0 => amount.to_string(),
            (Format::DecimalExponent, _) | (_, None) => format!("{amount}e{exponent}"),
            (_, Some((suffix, _))) => format!("{amount}{suffix}"),
        }
    }
}

/// `text`'s canonical form, or None when it is not a quantity.
pub(super) fn canonical(text: &str) -> Option<String> {
    parse(text).map(|q| q.canonical())
}

/// `text` rounded up to thousandths, canonical (the API's defaulting of resource lists).
pub(super) fn rounded_to_milli(text: &str) -> Option<String> {
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
