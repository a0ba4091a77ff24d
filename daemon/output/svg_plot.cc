// SPDX-License-Identifier: Apache-2.0
#include "daemon/output/svg_plot.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstddef>
#include <system_error>

#include "daemon/common/markup_escape.h"

namespace numaprobe::daemon {
namespace {

// Okabe-Ito: distinguishable with the common colour-vision deficiencies.
constexpr const char* kPalette[] = {"#0072B2", "#D55E00", "#009E73", "#CC79A7",
                                    "#E69F00", "#56B4E9", "#000000", "#F0E442"};
constexpr int kMarginLeft = 76;
constexpr int kMarginTop = 44;
constexpr int kMarginBottom = 56;
constexpr int kLegendWidth = 260;
constexpr std::size_t kLegendChars = 36;  // ~250 px; longer names are cut with an ellipsis
constexpr int kTargetTicks = 6;

// std::to_chars, not printf: the output must not depend on the C locale.
std::string Fixed(double value, int decimals) {
  char buf[512];  // 1e308 has 309 digits
  const auto result = std::to_chars(buf, buf + sizeof(buf), value, std::chars_format::fixed, decimals);
  return result.ec == std::errc{} ? std::string(buf, result.ptr) : "?";
}

// [lo, hi] in whole ticks of 1, 2 or 5 x 10^k, always containing 0.
struct Axis {
  double lo = 0;
  double hi = 1;
  double step = 0.2;
  int decimals = 1;
};

Axis NiceAxis(double min_value, double max_value) {
  const double lo = std::min(0.0, min_value);
  double hi = std::max(0.0, max_value);
  if (hi - lo <= 0) hi = lo + 1;
  const double raw = (hi - lo) / kTargetTicks;
  const double magnitude = std::pow(10.0, std::floor(std::log10(raw)));
  const double norm = raw / magnitude;
  Axis axis;
  axis.step = (norm <= 1 ? 1 : norm <= 2 ? 2 : norm <= 5 ? 5 : 10) * magnitude;
  axis.lo = std::floor(lo / axis.step) * axis.step;
  axis.hi = std::ceil(hi / axis.step - 1e-9) * axis.step;
  // Enough decimals to tell ticks apart; capped, for absurdly small ranges.
  axis.decimals = std::clamp(-static_cast<int>(std::floor(std::log10(axis.step) + 1e-9)), 0, 12);
  return axis;
}

bool Finite(const PlotPoint& p) { return std::isfinite(p.x) && std::isfinite(p.y); }

class Canvas {
 public:
  Canvas(const PlotOptions& options, Axis x, Axis y)
      : width_(std::clamp(options.width, 480, 4000)),
        height_(std::clamp(options.height, 240, 4000)),
        x_(x),
        y_(y),
        left_(kMarginLeft),
        right_(width_ - kLegendWidth),
        top_(kMarginTop),
        bottom_(height_ - kMarginBottom) {}

  std::string X(double v) const { return Fixed(left_ + (v - x_.lo) / (x_.hi - x_.lo) * (right_ - left_), 1); }
  std::string Y(double v) const { return Fixed(bottom_ - (v - y_.lo) / (y_.hi - y_.lo) * (bottom_ - top_), 1); }

  void Frame(std::string& out, const PlotOptions& options) const {
    const std::string w = std::to_string(width_);
    const std::string h = std::to_string(height_);
    out += "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n";
    out += "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" + w + "\" height=\"" + h + "\" viewBox=\"0 0 " + w +
           " " + h + "\" font-family=\"sans-serif\" font-size=\"12\">\n";
    out += "<title>" + EscapeMarkup(options.title) + "</title>\n";
    out += "<rect width=\"" + w + "\" height=\"" + h + "\" fill=\"white\"/>\n";
    out += "<text class=\"title\" x=\"" + std::to_string((left_ + right_) / 2) +
           "\" y=\"24\" text-anchor=\"middle\" font-size=\"15\">" + EscapeMarkup(options.title) + "</text>\n";
  }

  void Axes(std::string& out, const PlotOptions& options) const {
    out += "<g class=\"grid\" stroke=\"#e4e4e4\">\n";
    std::string labels;
    for (int i = 0; x_.lo + i * x_.step <= x_.hi + x_.step * 1e-6; ++i) {
      const double v = x_.lo + i * x_.step;
      out += "<line x1=\"" + X(v) + "\" y1=\"" + Num(top_) + "\" x2=\"" + X(v) + "\" y2=\"" + Num(bottom_) + "\"/>\n";
      labels += "<text x=\"" + X(v) + "\" y=\"" + Num(bottom_ + 18) + "\" text-anchor=\"middle\">" +
                Fixed(v, x_.decimals) + "</text>\n";
    }
    for (int i = 0; y_.lo + i * y_.step <= y_.hi + y_.step * 1e-6; ++i) {
      const double v = y_.lo + i * y_.step;
      out += "<line x1=\"" + Num(left_) + "\" y1=\"" + Y(v) + "\" x2=\"" + Num(right_) + "\" y2=\"" + Y(v) + "\"/>\n";
      labels += "<text x=\"" + Num(left_ - 8) + "\" y=\"" + Y(v) + "\" text-anchor=\"end\" dy=\"4\">" +
                Fixed(v, y_.decimals) + "</text>\n";
    }
    out += "</g>\n<g class=\"ticks\">\n" + labels + "</g>\n";
    out += "<rect class=\"axes\" x=\"" + Num(left_) + "\" y=\"" + Num(top_) + "\" width=\"" + Num(right_ - left_) +
           "\" height=\"" + Num(bottom_ - top_) + "\" fill=\"none\" stroke=\"black\"/>\n";
    out += "<text class=\"x-label\" x=\"" + Num((left_ + right_) / 2) + "\" y=\"" + Num(height_ - 14) +
           "\" text-anchor=\"middle\">" + EscapeMarkup(options.x_label) + "</text>\n";
    const std::string cy = Num((top_ + bottom_) / 2);
    out += "<text class=\"y-label\" x=\"18\" y=\"" + cy + "\" text-anchor=\"middle\" transform=\"rotate(-90 18 " + cy +
           ")\">" + EscapeMarkup(options.y_label) + "</text>\n";
  }

  void Series(std::string& out, const PlotSeries& s, const char* color) const {
    out += "<g class=\"series\" stroke=\"" + std::string(color) + "\" fill=\"" + color + "\">\n<title>" +
           EscapeMarkup(s.name) + "</title>\n";
    std::string points;
    std::string markers;
    for (const PlotPoint& p : s.points) {
      if (!Finite(p)) continue;
      points += (points.empty() ? "" : " ") + X(p.x) + "," + Y(p.y);
      markers += "<circle cx=\"" + X(p.x) + "\" cy=\"" + Y(p.y) + "\" r=\"3\"><title>" + EscapeMarkup(s.name) + ": " +
                 Fixed(p.x, 2) + ", " + Fixed(p.y, 1) + "</title></circle>\n";
    }
    if (!points.empty()) out += "<polyline fill=\"none\" stroke-width=\"2\" points=\"" + points + "\"/>\n";
    out += markers + "</g>\n";
  }

  void Legend(std::string& out, const std::vector<PlotSeries>& series) const {
    out += "<g class=\"legend\">\n";
    for (std::size_t i = 0; i < series.size(); ++i) {
      const char* color = kPalette[i % std::size(kPalette)];
      const std::string y = Num(top_ + 8 + static_cast<int>(i) * 20);
      out += "<line x1=\"" + Num(right_ + 14) + "\" y1=\"" + y + "\" x2=\"" + Num(right_ + 38) + "\" y2=\"" + y +
             "\" stroke=\"" + color + "\" stroke-width=\"2\"/>\n";
      out += "<circle cx=\"" + Num(right_ + 26) + "\" cy=\"" + y + "\" r=\"3\" fill=\"" + color + "\"/>\n";
      out += "<text x=\"" + Num(right_ + 46) + "\" y=\"" + y + "\" dy=\"4\">" +
             EscapeMarkup(series[i].name, kLegendChars) + "</text>\n";
    }
    out += "</g>\n";
  }

  void NoData(std::string& out) const {
    out += "<text class=\"no-data\" x=\"" + Num((left_ + right_) / 2) + "\" y=\"" + Num((top_ + bottom_) / 2) +
           "\" text-anchor=\"middle\" fill=\"#777\">no data</text>\n";
  }

 private:
  static std::string Num(int v) { return std::to_string(v); }

  int width_;
  int height_;
  Axis x_;
  Axis y_;
  int left_;
  int right_;
  int top_;
  int bottom_;
};

}  // namespace

std::string RenderSvgPlot(const std::vector<PlotSeries>& series, const PlotOptions& options) {
  double min_x = 0, max_x = 0, min_y = 0, max_y = 0;
  bool any = false;
  for (const PlotSeries& s : series) {
    for (const PlotPoint& p : s.points) {
      if (!Finite(p)) continue;
      min_x = any ? std::min(min_x, p.x) : p.x;
      max_x = any ? std::max(max_x, p.x) : p.x;
      min_y = any ? std::min(min_y, p.y) : p.y;
      max_y = any ? std::max(max_y, p.y) : p.y;
      any = true;
    }
  }
  const Canvas canvas(options, NiceAxis(min_x, max_x), NiceAxis(min_y, max_y));
  std::string out;
  canvas.Frame(out, options);
  canvas.Axes(out, options);
  for (std::size_t i = 0; i < series.size(); ++i) canvas.Series(out, series[i], kPalette[i % std::size(kPalette)]);
  canvas.Legend(out, series);
  if (!any) canvas.NoData(out);
  out += "</svg>\n";
  return out;
}

}  // namespace numaprobe::daemon
