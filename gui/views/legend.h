#pragma once
// The timeline's colour legend, one swatch per kind of event, in one line above it.

#include <QWidget>

namespace tuneup::gui {

class Legend : public QWidget {
    Q_OBJECT
public:
    explicit Legend(QWidget* parent = nullptr);
    QSize sizeHint() const override;

protected:
    void paintEvent(QPaintEvent* event) override;
};

} // namespace tuneup::gui
