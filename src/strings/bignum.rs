//! Unsigned big integers for the exact decimal <-> binary conversions: what those need and nothing
//! more (shifts, products, exact division with remainder, comparison, decimal text, digit
//! parsing). Little-endian 32-bit limbs with no zero limb at the top, so that every value has one
//! representation and `==` is limb equality.

// A general unsigned integer: not every build uses every operation (Range needs `ops`, the
// decimal writer `strings`).
#![cfg_attr(not(all(feature = "strings", feature = "ops")), allow(dead_code))]

use crate::alloc_prelude::*;
use core::cmp::Ordering;
use core::fmt;

/// An unsigned integer of any size.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct BigUint {
    limbs: Vec<u32>,
}

impl BigUint {
    pub(crate) const ZERO: BigUint = BigUint { limbs: Vec::new() };

    fn from_limbs(mut limbs: Vec<u32>) -> BigUint {
        while limbs.last() == Some(&0) {
            limbs.pop();
        }
        BigUint { limbs }
    }

    pub(crate) fn one() -> BigUint {
        BigUint { limbs: vec![1] }
    }

    pub(crate) fn is_zero(&self) -> bool {
        self.limbs.is_empty()
    }

    /// The number of significant bits (0 for zero).
    pub(crate) fn bits(&self) -> u64 {
        match self.limbs.last() {
            None => 0,
            Some(&top) => 32 * self.limbs.len() as u64 - u64::from(top.leading_zeros()),
        }
    }

    /// The number of trailing zero bits (`None` for zero).
    pub(crate) fn trailing_zeros(&self) -> Option<u64> {
        let i = self.limbs.iter().position(|&l| l != 0)?;
        Some(32 * i as u64 + u64::from(self.limbs[i].trailing_zeros()))
    }

    /// The value if it fits 128 bits.
    pub(crate) fn to_u128(&self) -> Option<u128> {
        if self.limbs.len() > 4 {
            return None;
        }
        Some(self.limbs.iter().rev().fold(0u128, |acc, &l| acc << 32 | u128::from(l)))
    }

    /// The value if it fits 64 bits.
    pub(crate) fn to_u64(&self) -> Option<u64> {
        self.to_u128().and_then(|v| u64::try_from(v).ok())
    }

    /// `self * 2^n`.
    pub(crate) fn shl(&self, n: u64) -> BigUint {
        if self.is_zero() {
            return BigUint::ZERO;
        }
        let (words, bits) = ((n / 32) as usize, (n % 32) as u32);
        let mut limbs = vec![0u32; words];
        limbs.reserve(self.limbs.len() + 1);
        if bits == 0 {
            limbs.extend_from_slice(&self.limbs);
        } else {
            let mut carry = 0u32;
            for &l in &self.limbs {
                limbs.push(l << bits | carry);
                carry = l >> (32 - bits);
            }
            limbs.push(carry);
        }
        BigUint::from_limbs(limbs)
    }

    /// `floor(self / 2^n)`.
    pub(crate) fn shr(&self, n: u64) -> BigUint {
        let (words, bits) = ((n / 32) as usize, (n % 32) as u32);
        if words >= self.limbs.len() {
            return BigUint::ZERO;
        }
        let rest = &self.limbs[words..];
        let limbs = if bits == 0 {
            rest.to_vec()
        } else {
            (0..rest.len()).map(|i| rest[i] >> bits | rest.get(i + 1).map_or(0, |&next| next << (32 - bits))).collect()
        };
        BigUint::from_limbs(limbs)
    }

    /// `self + other`.
    pub(crate) fn add(&self, other: &BigUint) -> BigUint {
        let n = self.limbs.len().max(other.limbs.len());
        let mut limbs = Vec::with_capacity(n + 1);
        let mut carry = 0u64;
        for i in 0..n {
            let s = u64::from(self.limbs.get(i).copied().unwrap_or(0))
                + u64::from(other.limbs.get(i).copied().unwrap_or(0))
                + carry;
            limbs.push(s as u32);
            carry = s >> 32;
        }
        limbs.push(carry as u32);
        BigUint::from_limbs(limbs)
    }

    /// `|self - other|`.
    pub(crate) fn abs_diff(&self, other: &BigUint) -> BigUint {
        let (big, small) = if *self >= *other { (self, other) } else { (other, self) };
        let mut limbs = big.limbs.clone();
        let mut borrow = 0u64;
        for (i, l) in limbs.iter_mut().enumerate() {
            let d =
                u64::from(*l).wrapping_sub(u64::from(small.limbs.get(i).copied().unwrap_or(0))).wrapping_sub(borrow);
            *l = d as u32;
            borrow = u64::from(d >> 63 != 0);
        }
        BigUint::from_limbs(limbs)
    }

    /// `self * other`.
    pub(crate) fn mul(&self, other: &BigUint) -> BigUint {
        if self.is_zero() || other.is_zero() {
            return BigUint::ZERO;
        }
        let mut limbs = vec![0u32; self.limbs.len() + other.limbs.len()];
        for (i, &a) in self.limbs.iter().enumerate() {
            let mut carry = 0u64;
            for (j, &b) in other.limbs.iter().enumerate() {
                let t = u64::from(a) * u64::from(b) + u64::from(limbs[i + j]) + carry;
                limbs[i + j] = t as u32;
                carry = t >> 32;
            }
            limbs[i + other.limbs.len()] = carry as u32;
        }
        BigUint::from_limbs(limbs)
    }

    /// `self * m + a` in place.
    fn mul_add_small(&mut self, m: u32, a: u32) {
        let mut carry = u64::from(a);
        for l in &mut self.limbs {
            let t = u64::from(*l) * u64::from(m) + carry;
            *l = t as u32;
            carry = t >> 32;
        }
        if carry != 0 {
            self.limbs.push(carry as u32);
        }
    }

    /// `self + a`.
    pub(crate) fn add_small(mut self, a: u32) -> BigUint {
        self.mul_add_small(1, a);
        self
    }

    /// Whether the lowest bit is set.
    pub(crate) fn is_odd(&self) -> bool {
        self.limbs.first().is_some_and(|&l| l & 1 == 1)
    }

    /// `base^exponent`.
    pub(crate) fn pow(base: u32, exponent: u32) -> BigUint {
        let mut result = BigUint::one();
        for _ in 0..exponent {
            result.mul_add_small(base, 0);
        }
        result
    }

    /// `floor(self / d)` and the remainder, for a small divisor.
    fn div_rem_small(&self, d: u32) -> (BigUint, u32) {
        let mut rem = 0u64;
        let mut q = vec![0u32; self.limbs.len()];
        for (i, &l) in self.limbs.iter().enumerate().rev() {
            let cur = rem << 32 | u64::from(l);
            q[i] = (cur / u64::from(d)) as u32;
            rem = cur % u64::from(d);
        }
        (BigUint::from_limbs(q), rem as u32)
    }

    /// `(floor(self / d), self mod d)`; `d` must not be zero. Long division in base 2^32
    /// (Knuth's algorithm D): each quotient digit is estimated from the top two limbs of the
    /// running remainder over the top limb of the normalised divisor, corrected at most twice,
    /// then once more if the subtraction goes negative.
    pub(crate) fn div_rem(&self, d: &BigUint) -> (BigUint, BigUint) {
        assert!(!d.is_zero(), "division by zero");
        if self.cmp(d) == Ordering::Less {
            return (BigUint::ZERO, self.clone());
        }
        if d.limbs.len() == 1 {
            let (q, r) = self.div_rem_small(d.limbs[0]);
            return (q, BigUint::from(u64::from(r)));
        }
        // Normalise: the divisor's top limb gets its high bit set.
        let shift = u64::from(d.limbs[d.limbs.len() - 1].leading_zeros());
        let v = d.shl(shift).limbs;
        let mut u = self.shl(shift).limbs;
        u.push(0);
        let n = v.len();
        let m = u.len() - n - 1;
        let (v_top, v_next) = (u64::from(v[n - 1]), u64::from(v[n - 2]));
        let mut q = vec![0u32; m + 1];
        for j in (0..=m).rev() {
            let top = u64::from(u[j + n]) << 32 | u64::from(u[j + n - 1]);
            let mut qhat = top / v_top;
            let mut rhat = top % v_top;
            while qhat > u64::from(u32::MAX) || qhat * v_next > (rhat << 32 | u64::from(u[j + n - 2])) {
                qhat -= 1;
                rhat += v_top;
                if rhat > u64::from(u32::MAX) {
                    break;
                }
            }
            // u[j..=j+n] -= qhat * v
            let mut borrow = 0i64;
            let mut carry = 0u64;
            for i in 0..n {
                let p = qhat * u64::from(v[i]) + carry;
                carry = p >> 32;
                let t = i64::from(u[i + j]) - borrow - i64::from(p as u32);
                u[i + j] = t as u32;
                borrow = i64::from(t < 0);
            }
            let t = i64::from(u[j + n]) - borrow - carry as i64;
            u[j + n] = t as u32;
            if t < 0 {
                // qhat was one too large: add the divisor back.
                qhat -= 1;
                let mut carry = 0u64;
                for i in 0..n {
                    let s = u64::from(u[i + j]) + u64::from(v[i]) + carry;
                    u[i + j] = s as u32;
                    carry = s >> 32;
                }
                u[j + n] = u[j + n].wrapping_add(carry as u32);
            }
            q[j] = qhat as u32;
        }
        u.truncate(n);
        (BigUint::from_limbs(q), BigUint::from_limbs(u).shr(shift))
    }

    /// The value of ASCII digits in `radix` (2 to 36); `None` for an empty string or a character
    /// that is no digit of the radix.
    pub(crate) fn parse(digits: &[u8], radix: u32) -> Option<BigUint> {
        if digits.is_empty() {
            return None;
        }
        let mut value = BigUint::ZERO;
        for &b in digits {
            let d = char::from(b).to_digit(radix)?;
            value.mul_add_small(radix, d);
        }
        Some(BigUint::from_limbs(value.limbs))
    }
}

impl BigUint {
    pub(crate) fn from_u128(v: u128) -> BigUint {
        BigUint::from_limbs((0..4).map(|i| (v >> (32 * i)) as u32).collect())
    }
}

impl From<u64> for BigUint {
    fn from(v: u64) -> BigUint {
        BigUint::from_u128(u128::from(v))
    }
}

impl Ord for BigUint {
    fn cmp(&self, other: &BigUint) -> Ordering {
        self.limbs.len().cmp(&other.limbs.len()).then_with(|| self.limbs.iter().rev().cmp(other.limbs.iter().rev()))
    }
}

impl PartialOrd for BigUint {
    fn partial_cmp(&self, other: &BigUint) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl fmt::Display for BigUint {
    /// Decimal digits, nine at a time.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.is_zero() {
            return f.write_str("0");
        }
        let mut groups = Vec::new();
        let mut rest = self.clone();
        while !rest.is_zero() {
            let (q, r) = rest.div_rem_small(1_000_000_000);
            groups.push(r);
            rest = q;
        }
        let mut text = groups.last().map_or_else(String::new, |top| top.to_string());
        for g in groups.iter().rev().skip(1) {
            text.push_str(&format!("{g:09}"));
        }
        f.write_str(&text)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    impl BigUint {
        /// `self - s` by limbs (test-only; `self >= s`).
        fn sub_small(self, s: u32) -> BigUint {
            let mut limbs = self.limbs;
            let mut borrow = u64::from(s);
            for l in &mut limbs {
                let (v, under) = l.overflowing_sub(borrow as u32);
                *l = v;
                borrow = u64::from(under);
                if borrow == 0 {
                    break;
                }
            }
            BigUint::from_limbs(limbs)
        }
    }

    fn big(v: u128) -> BigUint {
        BigUint::from_u128(v)
    }

    /// A deterministic xorshift sequence of operands of every size up to 128 bits.
    fn operands() -> Vec<u128> {
        let mut x = 0x9E37_79B9_7F4A_7C15u64;
        let mut next = || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x
        };
        let mut v = vec![0, 1, 2, 3, u128::from(u32::MAX), 1 << 32, u128::from(u64::MAX), 1 << 64, u128::MAX];
        for bits in 1..=128 {
            let r = u128::from(next()) << 64 | u128::from(next());
            v.push(if bits == 128 { r } else { r & ((1u128 << bits) - 1) });
            v.push(1u128 << (bits - 1));
            v.push((1u128 << (bits - 1)) | 1);
        }
        v
    }

    #[test]
    fn arithmetic_equals_u128_on_operands_that_fit() {
        let ops = operands();
        for &a in &ops {
            let ba = big(a);
            assert_eq!(ba.to_u128(), Some(a));
            assert_eq!(ba.bits(), u64::from(128 - a.leading_zeros()));
            assert_eq!(ba.trailing_zeros(), (a != 0).then(|| u64::from(a.trailing_zeros())));
            assert_eq!(ba.to_string(), a.to_string());
            assert_eq!(BigUint::parse(a.to_string().as_bytes(), 10), Some(ba.clone()));
            assert_eq!(BigUint::parse(format!("{a:x}").as_bytes(), 16), Some(ba.clone()));
            for s in [0u64, 1, 5, 31, 32, 33, 64, 100] {
                if a.leading_zeros() as u64 >= s {
                    assert_eq!(ba.shl(s).to_u128(), Some(a << s), "{a} << {s}");
                }
                assert_eq!(ba.shr(s).to_u128(), Some(if s < 128 { a >> s } else { 0 }), "{a} >> {s}");
            }
            for &b in ops.iter().step_by(3) {
                let bb = big(b);
                assert_eq!(ba.cmp(&bb), a.cmp(&b));
                if let Some(sum) = a.checked_add(b) {
                    assert_eq!(ba.add(&bb).to_u128(), Some(sum), "{a} + {b}");
                }
                assert_eq!(ba.abs_diff(&bb).to_u128(), Some(a.abs_diff(b)), "|{a} - {b}|");
                if let Some(p) = a.checked_mul(b) {
                    assert_eq!(ba.mul(&bb).to_u128(), Some(p), "{a} * {b}");
                }
                if let (Some(q), Some(r)) = (a.checked_div(b), a.checked_rem(b)) {
                    let (bq, br) = ba.div_rem(&bb);
                    assert_eq!((bq.to_u128(), br.to_u128()), (Some(q), Some(r)), "{a} / {b}");
                }
            }
        }
    }

    #[test]
    fn big_values_equal_python_ints() {
        // Fixtures from Python 3's int (an independent implementation): str(2**200),
        // divmod(10**40, 7), divmod(2**255 + 12345, 2**128 - 159), divmod(10**300 + 7, 3**200 + 11),
        // int("f" * 40, 16), 5**60.
        let dec = |s: &str| BigUint::parse(s.as_bytes(), 10).unwrap();
        let two_200 = BigUint::one().shl(200);
        assert_eq!(two_200.to_string(), "1606938044258990275541962092341162602522202993782792835301376");
        assert_eq!((two_200.bits(), two_200.trailing_zeros()), (201, Some(200)));
        let (q, r) = BigUint::pow(10, 40).div_rem(&BigUint::from(7));
        assert_eq!((q.to_string().as_str(), r.to_string().as_str()), ("1428571428571428571428571428571428571428", "4"));
        let a = BigUint::one().shl(255).add_small(12345);
        assert_eq!(a, dec("57896044618658097711785492504343953926634992332820282019728792003956564832313"));
        let d = dec("340282366920938463463374607431768211297");
        assert_eq!(d, BigUint::one().shl(128).sub_small(159));
        let (q, r) = a.div_rem(&d);
        assert_eq!(q.to_string(), "170141183460469231731687303715884105807");
        assert_eq!(r.to_string(), "170141183460469231731687303715884130634");
        let x = BigUint::pow(10, 300).add_small(7);
        let y = BigUint::pow(3, 200).add_small(11);
        assert_eq!(
            y.to_string(),
            "265613988875874769338781322035779626829233452653394495974574961739092490901302182994384699044012"
        );
        let (q, r) = x.div_rem(&y);
        assert_eq!(
            q.to_string(),
            "3764861949599026419883421890011116240970350976881919255950348547532965520614801297092487074265914946216123538750672980247333825658916883243123955642966739249529181356064529669187272578086538343235142021825"
        );
        assert_eq!(
            r.to_string(),
            "11247587208083331872416085041660334485950007138506520673613184421295302655766692830873660438107"
        );
        // The quotient and remainder put back together.
        assert_eq!(q.mul(&y).add(&r), x);
        assert_eq!(
            BigUint::parse(&[b'f'; 40], 16).unwrap().to_string(),
            "1461501637330902918203684832716283019655932542975"
        );
        assert_eq!(BigUint::pow(5, 60).to_string(), "867361737988403547205962240695953369140625");
        assert_eq!(BigUint::parse(b"12z", 10), None);
        assert_eq!(BigUint::parse(b"", 10), None);
    }

    #[test]
    fn division_corrects_its_digit_estimates() {
        // Knuth's add-back case needs a quotient digit estimate that is one too large after the
        // two-limb test; these operands (checked against Python's divmod) exercise the
        // correction loops: u = 0x7fff_ffff_8000_0000_0000_0000_0000_0000,
        // v = 0x8000_0000_0000_0001_0000_0000 gives q = 0xffff_fffe, r = 0x7fff_ffff_0000_0002_0000_0000.
        let u = big(0x7fff_ffff_8000_0000_0000_0000_0000_0000);
        let v = big(0x8000_0000_0000_0001_0000_0000);
        let (q, r) = u.div_rem(&v);
        assert_eq!(q.to_u128(), Some(0xffff_fffe));
        assert_eq!(r.to_u128(), Some(0x7fff_ffff_0000_0002_0000_0000));
        // And against u128 on divisors of two to four limbs whose top limb has its high bit set
        // or clear, with quotients whose digits are all 0xffffffff.
        for v in [0x1_0000_0001u128, 0xffff_ffff_ffff_ffff, 0x8000_0000_0000_0000_0000_0001, u128::MAX >> 1] {
            for u in [u128::MAX, u128::MAX - 1, v.wrapping_mul(3).wrapping_sub(1), v.wrapping_mul(0xffff_ffff)] {
                let (q, r) = big(u).div_rem(&big(v));
                assert_eq!((q.to_u128(), r.to_u128()), (Some(u / v), Some(u % v)), "{u:#x} / {v:#x}");
            }
        }
    }
}
