//! Where a long parameter array is cut into requests.
//!
//! Driver 18 sends a parameter array as one TDS request in which every row is an RPC repeating
//! the statement text and its parameter declarations. A million narrow rows made one request
//! of more than 256 MiB, the most SQL Server takes in one (65,536 packets of its default
//! 4 KiB); the peer refused it as SQL Server does. Cut near `REQUEST_BYTES`, a request is still
//! tens of thousands of narrow rows (the round trip per request is lost in the noise), and the
//! bound buffers of one array stay bounded.

use super::ParamValue;

/// About how many bytes one request of an array should carry.
pub const REQUEST_BYTES: usize = 16 << 20;

/// What one row costs on the wire, roughly: the statement and per-parameter declarations the
/// driver repeats for it, and the values.
fn row_bytes(sql_len: usize, row: &[ParamValue]) -> usize {
    let values: usize = row
        .iter()
        .map(|v| match v {
            ParamValue::Text(units) => 2 * units.len(),
            ParamValue::Bytes(bytes) => bytes.len(),
            ParamValue::Decimal { text, .. } => text.len(),
            _ => 16,
        })
        .sum();
    2 * sql_len + 48 * row.len() + values
}

/// The end (exclusive) of the request that starts at row `start`: at least one row, and as
/// many more as fit in `budget` bytes.
pub fn request_end(sql_len: usize, rows: &[Vec<ParamValue>], start: usize, budget: usize) -> usize {
    let mut used = 0usize;
    for (i, row) in rows.iter().enumerate().skip(start) {
        used += row_bytes(sql_len, row);
        if used > budget && i > start {
            return i;
        }
    }
    rows.len()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ints(n: usize) -> Vec<Vec<ParamValue>> {
        vec![vec![ParamValue::Int(1), ParamValue::Float(2.0)]; n]
    }

    #[test]
    fn requests_cover_every_row_once_within_the_budget() {
        let rows = ints(1000);
        let per_row = row_bytes(10, &rows[0]);
        let budget = per_row * 300;
        let mut cuts = vec![0];
        while *cuts.last().unwrap() < rows.len() {
            cuts.push(request_end(10, &rows, *cuts.last().unwrap(), budget));
        }
        assert_eq!(cuts, vec![0, 300, 600, 900, 1000]);
    }

    #[test]
    fn a_row_larger_than_the_budget_is_a_request_of_its_own() {
        let mut rows = ints(3);
        rows[1] = vec![ParamValue::Bytes(vec![0; 1 << 20]), ParamValue::Null];
        assert_eq!(request_end(10, &rows, 0, 4096), 1);
        assert_eq!(request_end(10, &rows, 1, 4096), 2);
        assert_eq!(request_end(10, &rows, 2, 4096), 3);
    }

    #[test]
    fn a_short_array_is_one_request() {
        assert_eq!(request_end(10, &ints(5), 0, REQUEST_BYTES), 5);
        assert_eq!(request_end(10, &[], 0, REQUEST_BYTES), 0);
    }
}
