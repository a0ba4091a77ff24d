// SPDX-License-Identifier: Apache-2.0
// Unit tests for daemon/output/svg_plot.cc. Every output is parsed by a real
// XML parser (libxml2) and inspected with XPath, not matched as text.
#include "daemon/output/svg_plot.h"

#include <libxml/parser.h>
#include <libxml/tree.h>
#include <libxml/xpath.h>
#include <libxml/xpathInternals.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include <gtest/gtest.h>

namespace numaprobe::daemon {
namespace {

// A parsed SVG document, queried with XPath; "s" is the SVG namespace.
class Svg {
 public:
  explicit Svg(const std::string& text)
      : doc_(xmlReadMemory(text.data(), static_cast<int>(text.size()), "plot.svg", nullptr, XML_PARSE_NONET),
             xmlFreeDoc) {
    if (doc_ == nullptr) return;
    ctx_.reset(xmlXPathNewContext(doc_.get()));
    xmlXPathRegisterNs(ctx_.get(), Xml("s"), Xml("http://www.w3.org/2000/svg"));
  }
  bool well_formed() const { return doc_ != nullptr; }

  std::vector<std::string> Texts(const char* xpath) const {
    std::vector<std::string> out;
    std::unique_ptr<xmlXPathObject, void (*)(xmlXPathObjectPtr)> result(xmlXPathEvalExpression(Xml(xpath), ctx_.get()),
                                                                        xmlXPathFreeObject);
    if (result == nullptr || result->nodesetval == nullptr) return out;
    for (int i = 0; i < result->nodesetval->nodeNr; ++i) {
      xmlChar* content = xmlNodeGetContent(result->nodesetval->nodeTab[i]);
      out.emplace_back(reinterpret_cast<const char*>(content));
      xmlFree(content);
    }
    return out;
  }
  std::size_t Count(const char* xpath) const { return Texts(xpath).size(); }
  std::vector<double> Numbers(const char* xpath) const {
    std::vector<double> out;
    for (const std::string& t : Texts(xpath)) out.push_back(std::stod(t));
    return out;
  }

 private:
  static const xmlChar* Xml(const char* s) { return reinterpret_cast<const xmlChar*>(s); }
  struct FreeContext {
    void operator()(xmlXPathContextPtr c) const { xmlXPathFreeContext(c); }
  };
  std::unique_ptr<xmlDoc, void (*)(xmlDocPtr)> doc_;
  std::unique_ptr<xmlXPathContext, FreeContext> ctx_;
};

PlotSeries Curve(std::string name, std::vector<PlotPoint> points) { return {std::move(name), std::move(points)}; }

TEST(SvgPlotTest, OnePolylineAndOneLegendEntryPerSeries) {
  const std::vector<PlotSeries> series = {
      Curve("cpu 0 -> node 0, read", {{9.1, 203.6}, {4.0, 183.8}, {0.16, 180.2}}),
      Curve("cpu 0 -> node 0, read2-ntwrite1", {{5.2, 186.8}, {2.9, 172.0}}),
  };
  const Svg svg(RenderSvgPlot(series));
  ASSERT_TRUE(svg.well_formed());
  EXPECT_EQ(svg.Count("/s:svg"), 1u);
  EXPECT_EQ(svg.Count("//s:g[@class='series']"), 2u);
  EXPECT_EQ(svg.Count("//s:g[@class='series']/s:polyline"), 2u);
  EXPECT_EQ(svg.Count("//s:g[@class='series'][1]/s:circle"), 3u);
  EXPECT_EQ(svg.Count("//s:g[@class='series'][2]/s:circle"), 2u);
  EXPECT_EQ(svg.Texts("//s:g[@class='series']/s:title"), (std::vector<std::string>{series[0].name, series[1].name}));
  EXPECT_EQ(svg.Texts("//s:g[@class='legend']/s:text"), svg.Texts("//s:g[@class='series']/s:title"));
  // Two series, two colours.
  const std::vector<std::string> colours = svg.Texts("//s:g[@class='series']/@stroke");
  ASSERT_EQ(colours.size(), 2u);
  EXPECT_NE(colours[0], colours[1]);
  EXPECT_EQ(svg.Count("//s:text[@class='no-data']"), 0u);
}

TEST(SvgPlotTest, EveryMarkerLiesInsideThePlotArea) {
  const Svg svg(RenderSvgPlot({Curve("a", {{0, 0}, {9.1, 203.6}, {12.7, 95.0}})}));
  ASSERT_TRUE(svg.well_formed());
  const double x = svg.Numbers("//s:rect[@class='axes']/@x").at(0);
  const double y = svg.Numbers("//s:rect[@class='axes']/@y").at(0);
  const double w = svg.Numbers("//s:rect[@class='axes']/@width").at(0);
  const double h = svg.Numbers("//s:rect[@class='axes']/@height").at(0);
  const std::vector<double> cx = svg.Numbers("//s:g[@class='series']/s:circle/@cx");
  const std::vector<double> cy = svg.Numbers("//s:g[@class='series']/s:circle/@cy");
  ASSERT_EQ(cx.size(), 3u);
  for (std::size_t i = 0; i < cx.size(); ++i) {
    EXPECT_GE(cx[i], x) << i;
    EXPECT_LE(cx[i], x + w) << i;
    EXPECT_GE(cy[i], y) << i;
    EXPECT_LE(cy[i], y + h) << i;
  }
  // The origin is the bottom-left corner: axes start at zero.
  EXPECT_DOUBLE_EQ(cx[0], x);
  EXPECT_DOUBLE_EQ(cy[0], y + h);
  // Larger y is drawn higher, larger x further right.
  EXPECT_LT(cy[1], cy[2]);
  EXPECT_LT(cx[1], cx[2]);
}

TEST(SvgPlotTest, TicksAreNiceAndCoverTheData) {
  const Svg svg(RenderSvgPlot({Curve("a", {{0.16, 180.2}, {9.1, 203.6}})}));
  ASSERT_TRUE(svg.well_formed());
  const std::vector<double> labels = svg.Numbers("//s:g[@class='ticks']/s:text");
  ASSERT_GE(labels.size(), 6u);
  EXPECT_EQ(labels.front(), 0);                                                 // x axis from 0
  EXPECT_TRUE(std::find(labels.begin(), labels.end(), 10.0) != labels.end());   // x up to 10 >= 9.1
  EXPECT_TRUE(std::find(labels.begin(), labels.end(), 250.0) != labels.end());  // y up to 250 >= 203.6
}

TEST(SvgPlotTest, TextIsEscapedAndSurvivesTheParserUnchanged) {
  const std::string name = "a<b & \"c\" 'd'> </g></svg><script>alert(1)</script>";
  PlotOptions options;
  options.title = "T&T <loaded> \"latency\"";
  options.x_label = "GB/s <x>";
  options.y_label = "ns & more";
  const Svg svg(RenderSvgPlot({Curve(name, {{1, 2}})}, options));
  ASSERT_TRUE(svg.well_formed());
  EXPECT_EQ(svg.Count("//*[local-name()='script']"), 0u);
  EXPECT_EQ(svg.Texts("//s:g[@class='series']/s:title"), std::vector<std::string>{name});
  EXPECT_EQ(svg.Texts("/s:svg/s:title"), std::vector<std::string>{options.title});
  EXPECT_EQ(svg.Texts("//s:text[@class='title']"), std::vector<std::string>{options.title});
  EXPECT_EQ(svg.Texts("//s:text[@class='x-label']"), std::vector<std::string>{options.x_label});
  EXPECT_EQ(svg.Texts("//s:text[@class='y-label']"), std::vector<std::string>{options.y_label});
}

TEST(SvgPlotTest, BytesXmlCannotHoldAreReplacedAndUnicodeKept) {
  const std::string bad = std::string("x\x01y\x1f") + "\xff" + "\xc3(" + "\xed\xa0\x80" + "z";
  const std::string good = "Knoten \xc2\xb5 0 \xe2\x86\x92 1 \xf0\x9f\x93\x88";  // µ, →, 📈
  const Svg svg(RenderSvgPlot({Curve(bad, {{1, 2}}), Curve(good, {{2, 3}})}));
  ASSERT_TRUE(svg.well_formed()) << "control characters or broken UTF-8 leaked into the document";
  const std::vector<std::string> titles = svg.Texts("//s:g[@class='series']/s:title");
  ASSERT_EQ(titles.size(), 2u);
  EXPECT_EQ(titles[0], "x?y???\x28???z");  // \x28 is "(": "??(" would be a trigraph
  EXPECT_EQ(titles[1], good);
}

TEST(SvgPlotTest, LongNamesAreCutInTheLegendOnly) {
  const std::string name(100, 'n');
  const Svg svg(RenderSvgPlot({Curve(name, {{1, 2}})}));
  ASSERT_TRUE(svg.well_formed());
  const std::vector<std::string> legend = svg.Texts("//s:g[@class='legend']/s:text");
  ASSERT_EQ(legend.size(), 1u);
  EXPECT_EQ(legend[0], std::string(36, 'n') + "\xe2\x80\xa6");
  EXPECT_EQ(svg.Texts("//s:g[@class='series']/s:title"), std::vector<std::string>{name});
}

TEST(SvgPlotTest, EmptyInputIsAWellFormedChartSayingNoData) {
  const Svg none(RenderSvgPlot({}));
  ASSERT_TRUE(none.well_formed());
  EXPECT_EQ(none.Count("//s:g[@class='series']"), 0u);
  EXPECT_EQ(none.Count("//s:polyline"), 0u);
  EXPECT_EQ(none.Texts("//s:text[@class='no-data']"), std::vector<std::string>{"no data"});
  EXPECT_GE(none.Count("//s:g[@class='ticks']/s:text"), 2u);

  // A series whose points are all unusable: listed, but nothing drawn.
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const double inf = std::numeric_limits<double>::infinity();
  const Svg empty(RenderSvgPlot({Curve("empty", {}), Curve("nan", {{nan, 1}, {1, inf}})}));
  ASSERT_TRUE(empty.well_formed());
  EXPECT_EQ(empty.Count("//s:g[@class='series']"), 2u);
  EXPECT_EQ(empty.Count("//s:polyline"), 0u);
  EXPECT_EQ(empty.Count("//s:circle[ancestor::s:g[@class='series']]"), 0u);
  EXPECT_EQ(empty.Count("//s:text[@class='no-data']"), 1u);
}

TEST(SvgPlotTest, NonFinitePointsAreSkippedNotDrawnAtInfinity) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const Svg svg(RenderSvgPlot({Curve("a", {{1, 100}, {nan, 5}, {2, 150}})}));
  ASSERT_TRUE(svg.well_formed());
  EXPECT_EQ(svg.Count("//s:g[@class='series']/s:circle"), 2u);
  const std::vector<std::string> points = svg.Texts("//s:polyline/@points");
  ASSERT_EQ(points.size(), 1u);
  EXPECT_EQ(std::count(points[0].begin(), points[0].end(), ','), 2);
  EXPECT_EQ(points[0].find("nan"), std::string::npos);
  EXPECT_EQ(points[0].find("inf"), std::string::npos);
}

TEST(SvgPlotTest, SameInputSameBytes) {
  const std::vector<PlotSeries> series = {Curve("a", {{1.5, 120}, {0.2, 101}})};
  EXPECT_EQ(RenderSvgPlot(series), RenderSvgPlot(series));
}

}  // namespace
}  // namespace numaprobe::daemon
