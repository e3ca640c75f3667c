#pragma once
// The timeline's colour legend, one swatch per kind of event, above it: in one line when the window is
// wide enough, else wrapped onto more.

#include <QWidget>
#include <vector>

namespace tuneup::gui {

class Legend : public QWidget {
    Q_OBJECT
public:
    explicit Legend(QWidget* parent = nullptr);
    QSize sizeHint() const override;
    bool hasHeightForWidth() const override { return true; }
    int heightForWidth(int width) const override;

protected:
    void paintEvent(QPaintEvent* event) override;

private:
    // Where each entry of kLegendKinds goes at this width.
    std::vector<QRect> entryRects(int width) const;
};

} // namespace tuneup::gui
